import type { Executor } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import { type KeyControls, type KeyControlsService, NO_CONTROLS } from '../auth/key-controls.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import { type HeldOpenGate, StatementParams } from '../money/held-open.js';
import { nairaText } from '../wallet/naira.js';

/** The configured defaults, for keys without their own value; 0 = no limit. */
export interface PayoutLimitDefaults {
  maxPayoutKobo: bigint;
  maxDailyKobo: bigint;
  maxDailyCount: number;
  maxHourlyCount: number;
  /** Production keys always get the defaults; sandbox keys only when this is on. */
  sandbox: boolean;
}

/** The limits in force for one credential; 0 = no limit. */
export interface PayoutLimits {
  maxPayoutKobo: bigint;
  maxDailyKobo: bigint;
  maxDailyCount: number;
  maxHourlyCount: number;
}

/** The names a refusal carries (REST `limit.name`, GraphQL `extensions.limit.name`). */
export const LIMIT_NAMES = {
  maxPayoutKobo: 'max_per_payout',
  maxDailyKobo: 'max_total_per_day',
  maxDailyCount: 'max_payouts_per_day',
  maxHourlyCount: 'max_payouts_per_hour',
} as const;

const DAY_MS = 24 * 3_600_000;
const HOUR_MS = 3_600_000;

export const NO_DEFAULTS: PayoutLimitDefaults = {
  maxPayoutKobo: 0n,
  maxDailyKobo: 0n,
  maxDailyCount: 0,
  maxHourlyCount: 0,
  sandbox: false,
};

/** A key's own value where it set one, else the default for its environment. */
export function effectiveLimits(principal: Principal, own: KeyControls, defaults: PayoutLimitDefaults): PayoutLimits {
  const base = principal.environment === 'production' || defaults.sandbox ? defaults : NO_DEFAULTS;
  return {
    maxPayoutKobo: own.maxPayoutKobo ?? base.maxPayoutKobo,
    maxDailyKobo: own.maxDailyKobo ?? base.maxDailyKobo,
    maxDailyCount: own.maxDailyCount ?? base.maxDailyCount,
    maxHourlyCount: own.maxHourlyCount ?? base.maxHourlyCount,
  };
}

/**
 * Per-credential payout limits: an amount cap per payout (403, waiting does not help) and, over
 * rolling windows, a total per day and a number per day and per hour (429 with the seconds until
 * enough earlier payouts leave the window). A stolen key drains at most a day's limit.
 */
export class PayoutControls {
  constructor(
    private readonly keyControls: Pick<KeyControlsService, 'of'>,
    private readonly defaults: PayoutLimitDefaults,
  ) {}

  /**
   * The first half of the check, early in the transaction that holds the money (no lock): the
   * limits in force for this credential, and a refusal of an amount over the per-payout cap or the
   * whole day's (waiting would not help). Returns the limits for `count`.
   */
  async limitsFor(tx: Executor, principal: Principal, amount: bigint): Promise<PayoutLimits> {
    const own = principal.kind === 'api_key' ? await this.keyControls.of(tx, principal.credentialId) : NO_CONTROLS;
    const limits = effectiveLimits(principal, own, this.defaults);
    if (limits.maxPayoutKobo > 0n && amount > limits.maxPayoutKobo)
      throw amountRefused('maxPayoutKobo', limits.maxPayoutKobo, 'per payout');
    if (limits.maxDailyKobo > 0n && amount > limits.maxDailyKobo)
      throw amountRefused('maxDailyKobo', limits.maxDailyKobo, 'in a day');
    return limits;
  }

  /** Whether a limit counts over a window: then concurrent payouts of one credential take turns (`lockWindow`). */
  windowed(limits: PayoutLimits): boolean {
    return limits.maxDailyKobo > 0n || limits.maxDailyCount > 0 || limits.maxHourlyCount > 0;
  }

  /**
   * With a limit per window, the per-credential lock makes concurrent payouts of one key take
   * turns, so together they cannot pass it. It lasts until the commit; a statement run after it
   * reads the window with a snapshot taken once it is granted, so it sees every earlier turn.
   */
  async lockWindow(tx: Executor, principal: Principal): Promise<void> {
    await runIn(tx, WINDOW_LOCK, [this.windowLock(principal)]);
  }

  /** The text of the credential's window lock (taken as `pg_advisory_xact_lock(hashtext(text))`). */
  windowLock(principal: Principal): string {
    return `payout-limits:${principal.credentialId}`;
  }

  /**
   * The second half, LAST in the transaction that holds the money, as a statement of its own
   * (the held operation's one-statement open writes the same through `PAYOUT_WINDOW_GATE`):
   * records this payout against the credential (a payout that later fails stops counting) and,
   * with a window, refuses it when the window is full. The lock, taken last, serialises only the
   * rest of the check and the commit, never the whole transaction.
   */
  async count(
    tx: Executor,
    principal: Principal,
    limits: PayoutLimits,
    payout: { amount: bigint; reference: string },
    now: Date,
  ): Promise<void> {
    if (this.windowed(limits)) await this.lockWindow(tx, principal);
    const [row] = await runIn<{ full_window: boolean }>(
      tx,
      COUNT.st,
      COUNT.params.values(windowValues(principal, limits, payout, now)),
    );
    if (!row!.full_window) return;
    throw await this.refusal(tx, principal, limits, payout, now);
  }

  /** Why a payout the window's check found over is refused: the limit and the seconds until enough earlier payouts leave it. */
  async refusal(
    db: Executor,
    principal: Principal,
    limits: PayoutLimits,
    payout: { amount: bigint; reference: string },
    now: Date,
  ): Promise<DomainError> {
    const rows = await runIn<{ amount: string | number; created_at: Date | string }>(db, WINDOW_ROWS, [
      principal.credentialId,
      new Date(now.getTime() - DAY_MS).toISOString(),
      payout.reference,
    ]);
    return (
      windowRefusal(limits, rows, payout.amount, now) ??
      // A payout of the window failed between the check and this read: refused all the same, to be retried at once.
      new DomainError(
        'PAYOUT_VELOCITY_EXCEEDED',
        'This key reached a payout limit a moment ago. Retry after 1 second.',
        {
          field: 'amount',
          retryAfter: 1,
        },
      )
    );
  }
}

/** The values `PAYOUT_WINDOW_GATE` and the count read, by name. */
export function windowValues(
  principal: Principal,
  limits: PayoutLimits | undefined,
  payout: { amount: bigint; reference: string },
  now: Date,
): Record<string, unknown> {
  const l = limits ?? { maxPayoutKobo: 0n, maxDailyKobo: 0n, maxDailyCount: 0, maxHourlyCount: 0 };
  return {
    credential: limits ? principal.credentialId : null,
    usageUserId: principal.userId,
    usageEnvironment: principal.environment,
    usageReference: payout.reference,
    usageAmount: payout.amount.toString(),
    usageAt: now.toISOString(),
    dayAgo: new Date(now.getTime() - DAY_MS).toISOString(),
    hourAgo: new Date(now.getTime() - HOUR_MS).toISOString(),
    maxDailyCount: l.maxDailyCount,
    maxHourlyCount: l.maxHourlyCount,
    maxDailyKobo: l.maxDailyKobo.toString(),
  };
}

/**
 * The window's rule as SQL, written once for the count and the held open: `win`, the credential's
 * payouts of the last day not failed as one row of counts and total (read only with a limit per
 * window), and `over_limit`, whether this payout would pass a limit. `usage`: rows past the day
 * dropped (each credential's as it pays out), then this payout's row, when `when` holds. Without
 * a credential (no controls) nothing is read or written.
 */
const windowCtes = (p: (name: string) => string) => {
  const sums = (from: string, also: string) => `select count(*) as day,
      count(*) filter (where u.created_at > ${p('hourAgo')}::timestamptz) as hour, coalesce(sum(u.amount), 0) as total
    from ${from}
    where u.credential_id = ${p('credential')}::text and u.created_at > ${p('dayAgo')}::timestamptz ${also}`;
  const over = (t: string) => `((${p('maxDailyCount')}::int > 0 and ${t}.day >= ${p('maxDailyCount')}::int)
      or (${p('maxHourlyCount')}::int > 0 and ${t}.hour >= ${p('maxHourlyCount')}::int)
      or (${p('maxDailyKobo')}::bigint > 0 and ${t}.total + ${p('usageAmount')}::bigint > ${p('maxDailyKobo')}::bigint))`;
  // Every usage row first (its own index, no join): when even they pass, the payouts that failed
  // need not be looked up; only a window that may be full is counted again without them.
  return `win as (
    ${sums('payout_key_usage u', `and (${p('maxDailyCount')}::int > 0 or ${p('maxHourlyCount')}::int > 0 or ${p('maxDailyKobo')}::bigint > 0)`)}
  ),
  over_limit as (
    select case when not ${over('a')} then false
      else (select ${over('x')} from (${sums(
        `payout_key_usage u
         join payouts w on w.user_id = u.user_id and w.environment = u.environment and w.reference = u.reference`,
        "and w.status <> 'failed'",
      )}) x) end as full_window
    from win a
  )`;
};
const usageCtes = (p: (name: string) => string, when: string) => `usage_dropped as (
    delete from payout_key_usage
    where credential_id = ${p('credential')}::text and created_at <= ${p('dayAgo')}::timestamptz and ${when}
  ),
  usage_added as (
    insert into payout_key_usage (credential_id, user_id, environment, reference, amount, created_at)
    select ${p('credential')}::text, ${p('usageUserId')}::uuid, ${p('usageEnvironment')}::environment,
      ${p('usageReference')}::text, ${p('usageAmount')}::bigint, ${p('usageAt')}::timestamptz
    where ${p('credential')}::text is not null and ${when}
  )`;

/**
 * The limits as a held open's gate (money/held-open.ts): the window read before the claim, the
 * open written only when it is not over, the usage row written with it. `window_full` tells the
 * caller to read the refusal (`refusal`). Its values are `windowValues`.
 */
export const PAYOUT_WINDOW_GATE = (p: (name: string) => string): HeldOpenGate => ({
  ctes: windowCtes(p),
  passes: 'not (select full_window from over_limit)',
  columns: '(select full_window from over_limit) as window_full',
  writes: usageCtes(p, 'exists (select 1 from moved)'),
});

/** The count on its own: the usage row, and whether the window was full (its snapshot, taken after the lock, not seeing the row). */
const COUNT = (() => {
  const params = new StatementParams();
  const text = `with ${windowCtes(params.of)}, ${usageCtes(params.of, 'not (select full_window from over_limit)')}
  select full_window from over_limit`;
  return { st: statement('payout_key_count_v2', text), params };
})();

const WINDOW_LOCK = statement('payout_key_window_lock_v2', `select pg_advisory_xact_lock(hashtext($1::text))`);

/** The window's payouts but this one, oldest first: read only to say when a refused payout may be retried. */
const WINDOW_ROWS = statement(
  'payout_key_window_rows_v1',
  `select u.amount, u.created_at from payout_key_usage u
   join payouts p on p.user_id = u.user_id and p.environment = u.environment and p.reference = u.reference
   where u.credential_id = $1::text and u.created_at > $2::timestamptz and p.status <> 'failed' and u.reference <> $3::text
   order by u.created_at`,
);

/** A payout over a window's limit: the refusal naming the limit and the seconds until enough earlier payouts leave it. */
function windowRefusal(
  limits: PayoutLimits,
  read: Array<{ amount: string | number; created_at: Date | string }>,
  amount: bigint,
  now: Date,
): DomainError | undefined {
  const rows = read.map((r) => ({ amount: BigInt(r.amount), at: new Date(r.created_at).getTime() }));
  // For each limit over: how long until enough of the oldest payouts leave its window.
  const waits: { field: keyof typeof LIMIT_NAMES; value: bigint | number; ms: number }[] = [];
  if (limits.maxDailyCount > 0 && rows.length >= limits.maxDailyCount) {
    const leaving = rows[rows.length - limits.maxDailyCount]!;
    waits.push({ field: 'maxDailyCount', value: limits.maxDailyCount, ms: leaving.at + DAY_MS - now.getTime() });
  }
  const lastHour = rows.filter((r) => r.at > now.getTime() - HOUR_MS);
  if (limits.maxHourlyCount > 0 && lastHour.length >= limits.maxHourlyCount) {
    const leaving = lastHour[lastHour.length - limits.maxHourlyCount]!;
    waits.push({ field: 'maxHourlyCount', value: limits.maxHourlyCount, ms: leaving.at + HOUR_MS - now.getTime() });
  }
  if (limits.maxDailyKobo > 0n) {
    let total = rows.reduce((sum, r) => sum + r.amount, 0n);
    for (const row of rows) {
      if (total + amount <= limits.maxDailyKobo) break;
      total -= row.amount;
      if (total + amount <= limits.maxDailyKobo)
        waits.push({ field: 'maxDailyKobo', value: limits.maxDailyKobo, ms: row.at + DAY_MS - now.getTime() });
    }
  }
  if (waits.length === 0) return undefined;
  const longest = waits.reduce((a, b) => (b.ms > a.ms ? b : a));
  const retryAfter = Math.max(1, Math.ceil(longest.ms / 1000));
  const name = LIMIT_NAMES[longest.field];
  const what =
    longest.field === 'maxDailyKobo'
      ? `payouts totalling at most ₦${nairaText(BigInt(longest.value))} in 24 hours`
      : `at most ${longest.value} payouts ${longest.field === 'maxHourlyCount' ? 'in an hour' : 'in 24 hours'}`;
  return new DomainError(
    'PAYOUT_VELOCITY_EXCEEDED',
    `Limit ${name}: this key may make ${what}. Retry after ${retryAfter} seconds.`,
    {
      field: 'amount',
      retryAfter,
      limit: { name, value: typeof longest.value === 'bigint' ? longest.value.toString() : longest.value },
    },
  );
}

function amountRefused(field: 'maxPayoutKobo' | 'maxDailyKobo', value: bigint, per: string): DomainError {
  const name = LIMIT_NAMES[field];
  return new DomainError(
    'PAYOUT_LIMIT_EXCEEDED',
    `Limit ${name}: this key may send at most ₦${nairaText(value)} ${per}.`,
    { field: 'amount', limit: { name, value: value.toString() } },
  );
}

export function payoutLimitDefaultsOf(config: {
  PAYOUT_LIMIT_PER_PAYOUT_KOBO: number;
  PAYOUT_LIMIT_DAILY_KOBO: number;
  PAYOUT_LIMIT_DAILY_COUNT: number;
  PAYOUT_LIMIT_HOURLY_COUNT: number;
  PAYOUT_LIMITS_SANDBOX: boolean;
}): PayoutLimitDefaults {
  return {
    maxPayoutKobo: BigInt(config.PAYOUT_LIMIT_PER_PAYOUT_KOBO),
    maxDailyKobo: BigInt(config.PAYOUT_LIMIT_DAILY_KOBO),
    maxDailyCount: config.PAYOUT_LIMIT_DAILY_COUNT,
    maxHourlyCount: config.PAYOUT_LIMIT_HOURLY_COUNT,
    sandbox: config.PAYOUT_LIMITS_SANDBOX,
  };
}

import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { type KeyControls, type KeyControlsService, NO_CONTROLS } from '../auth/key-controls.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
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

  /**
   * The second half, LAST in the transaction that holds the money: with a limit per window, the
   * per-credential lock makes concurrent payouts of one key take turns, so together they cannot
   * pass it; the lock lasts until the commit, so taken last it serialises only the rest of the
   * check and the commit, never the whole transaction. Records this payout against the credential
   * (a payout that later fails stops counting).
   */
  async count(
    tx: Executor,
    principal: Principal,
    limits: PayoutLimits,
    payout: { amount: bigint; reference: string },
    now: Date,
  ): Promise<void> {
    const windowed = limits.maxDailyKobo > 0n || limits.maxDailyCount > 0 || limits.maxHourlyCount > 0;
    const dayAgo = new Date(now.getTime() - DAY_MS);
    // Rows past the day count for nothing any more, each credential's dropped as it pays out; then
    // this payout's row. With windows, the same statement reads the window (its snapshot, taken
    // after the lock below, sees every earlier turn and not this row): one round trip fewer in the
    // turn, which every payout of the key waits for. A refusal rolls the row back with the rest.
    const record = sql`dropped as (
          delete from payout_key_usage where credential_id = ${principal.credentialId} and created_at <= ${dayAgo}
        ),
        added as (
          insert into payout_key_usage (credential_id, user_id, environment, reference, amount, created_at)
          values (${principal.credentialId}, ${principal.userId}, ${principal.environment}, ${payout.reference},
            ${payout.amount}, ${now})
        )`;
    if (!windowed) {
      await tx.execute(sql`with ${record} select 1`);
      return;
    }
    // Its own statement: the window is read by the next one, whose snapshot is taken after the
    // lock is granted (one statement's would predate it and miss a turn just committed).
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`payout-limits:${principal.credentialId}`}))`);
    // The window's counts and total, one row however many payouts it holds; its rows are read only
    // when this payout would pass a limit, to say when it may be retried.
    const window = sql`payout_key_usage u
          join payouts p on p.user_id = u.user_id and p.environment = u.environment and p.reference = u.reference
          where u.credential_id = ${principal.credentialId} and u.created_at > ${dayAgo} and p.status <> 'failed'`;
    const [sums] = await queryRows<{ day: string | number; hour: string | number; total: string | number }>(
      tx,
      sql`/* payoutKeyWindow */ with ${record}
          select count(*) as day, count(*) filter (where u.created_at > ${new Date(now.getTime() - HOUR_MS)}) as hour,
            coalesce(sum(u.amount), 0) as total
          from ${window}`,
    );
    if (!overAWindow(limits, sums!, payout.amount)) return;
    const rows = await queryRows<{ amount: string | number; created_at: Date | string }>(
      tx,
      // This payout's own row, counted by the statement before, is not one of them.
      sql`/* payoutKeyUsage */ select u.amount, u.created_at from ${window} and u.reference <> ${payout.reference}
          order by u.created_at`,
    );
    const refusal = windowRefusal(limits, rows, payout.amount, now);
    if (refusal) throw refusal;
  }
}

/** Whether the payout, with the window's payouts before it, would go over one of the window's limits. */
function overAWindow(
  limits: PayoutLimits,
  window: { day: string | number; hour: string | number; total: string | number },
  amount: bigint,
): boolean {
  return (
    (limits.maxDailyCount > 0 && Number(window.day) >= limits.maxDailyCount) ||
    (limits.maxHourlyCount > 0 && Number(window.hour) >= limits.maxHourlyCount) ||
    (limits.maxDailyKobo > 0n && BigInt(window.total) + amount > limits.maxDailyKobo)
  );
}

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

import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import { databaseOf } from '../../db/pool-routing.js';
import { runIn } from '../../db/plain-sql.js';
import type { Database, Executor } from '../../db/client.js';
import { ledgerAccounts, ledgerEntries, ledgerPostings } from '../../db/ledger-schema.js';
import type { Environment } from '../auth/permissions.js';
import { DomainError } from '../errors.js';
import { HELD_HOLD_OWNER, PLACE_HOLD, RELEASE_EXPIRED_HOLD, SETTLE_HOLD } from './ledger-sql.js';

/** A user's accounts (`wallet`, `holds`) and the system's (`provider_clearing`, `fees`), which may go negative. */
export type AccountCode = 'wallet' | 'holds' | 'provider_clearing' | 'fees';
const SYSTEM_CODES: ReadonlySet<AccountCode> = new Set(['provider_clearing', 'fees']);

export interface AccountRef {
  environment: Environment;
  /** Null for system accounts. */
  userId: string | null;
  code: AccountCode;
  /**
   * System accounts only: which of their SYSTEM_SHARDS rows (0 = the original row). Every tenant's
   * deposits and bills credit or debit provider clearing and fees; as one row, each posting would
   * wait for the previous one's commit. As shards, concurrent postings take different rows; the
   * account's balance is the sum of its shards (`systemBalance`), and each shard, like any account,
   * equals the sum of its own entries (what the ledger check verifies).
   */
  shard?: number;
}

/** How many rows each system account is spread over. */
export const SYSTEM_SHARDS = 16;

export interface PostingLine {
  account: AccountRef;
  /** Kobo: positive credits, negative debits. */
  amount: bigint;
}

export interface Posting {
  environment: Environment;
  /** What kind of movement: deposit, transfer, hold, capture, release, reversal… */
  kind: string;
  /** Unique per kind: the same movement is never posted twice. */
  reference: string;
  description?: string;
  lines: PostingLine[];
}

export const keyOf = (ref: AccountRef) =>
  `${ref.environment}:${ref.userId ?? 'system'}:${ref.code}${ref.shard ? `#${ref.shard}` : ''}`;

/** A system account line lands on a random shard: concurrent postings rarely share a row. */
const spread = (ref: AccountRef): AccountRef =>
  ref.userId === null && ref.shard === undefined ? { ...ref, shard: Math.floor(Math.random() * SYSTEM_SHARDS) } : ref;

export const walletOf = (environment: Environment, userId: string): AccountRef => ({
  environment,
  userId,
  code: 'wallet',
});
export const holdsOf = (environment: Environment, userId: string): AccountRef => ({
  environment,
  userId,
  code: 'holds',
});
export const systemAccount = (environment: Environment, code: 'provider_clearing' | 'fees'): AccountRef => ({
  environment,
  userId: null,
  code,
});

const accountIds = new WeakMap<Database, Map<string, string>>();
/** Enough for every busy wallet; past it the cache starts over rather than grow without bound. */
const MAX_CACHED_ACCOUNTS = 100_000;
/** Per database, the lookups in flight: a burst asking for one account waits for one lookup, not one each. */
const accountLookups = new WeakMap<Database, Map<string, Promise<string>>>();

export const insufficientFunds = () =>
  new DomainError('INSUFFICIENT_FUNDS', 'Insufficient wallet balance for this amount (including any fee).', {
    field: 'amount',
  });

/**
 * The double-entry NGN ledger. Every movement is a posting whose entries sum to zero; entries are
 * append-only (a database trigger refuses changes). A debit is one guarded UPDATE on the account
 * row (`balance + amount >= 0`), so no interleaving of concurrent transactions can overdraw a
 * wallet; accounts are touched in id order, so concurrent postings never deadlock.
 */
export const ledger = {
  /**
   * The account's id, created on first use. Read first: an insert meeting the existing row waits
   * (its unique check) for whichever transaction is updating that row's balance to end, so looking
   * up a busy wallet by inserting made each payout of it wait out the previous one's commit before
   * its own posting had even begun. A read waits for nobody.
   */
  async accountId(tx: Executor, ref: AccountRef): Promise<string> {
    const key = keyOf(ref);
    const [known] = await tx.select({ id: ledgerAccounts.id }).from(ledgerAccounts).where(eq(ledgerAccounts.key, key));
    if (known) return known.id;
    const [created] = await tx
      .insert(ledgerAccounts)
      .values({
        environment: ref.environment,
        userId: ref.userId,
        code: ref.code,
        key,
        allowNegative: SYSTEM_CODES.has(ref.code),
      })
      .onConflictDoNothing({ target: ledgerAccounts.key })
      .returning({ id: ledgerAccounts.id });
    if (created) return created.id;
    const [existing] = await tx
      .select({ id: ledgerAccounts.id })
      .from(ledgerAccounts)
      .where(eq(ledgerAccounts.key, key));
    return existing!.id;
  },

  /**
   * The account's id, remembered per database: an account's id never changes once created, so hot
   * paths (a transfer) resolve both accounts without a round trip after the first time.
   */
  async cachedAccountId(db: Database, ref: AccountRef): Promise<string> {
    // Per database, whichever of its handles asks (a job's own handle included).
    const database = databaseOf(db);
    let known = accountIds.get(database);
    if (!known) accountIds.set(database, (known = new Map()));
    const key = keyOf(ref);
    const id = known.get(key);
    if (id !== undefined) return id;
    let lookups = accountLookups.get(database);
    if (!lookups) accountLookups.set(database, (lookups = new Map()));
    let lookup = lookups.get(key);
    if (!lookup) {
      lookup = this.accountId(db, ref).then(
        (found) => {
          lookups.delete(key);
          if (known.size >= MAX_CACHED_ACCOUNTS) known.clear();
          known.set(key, found);
          return found;
        },
        (error: unknown) => {
          lookups.delete(key);
          throw error;
        },
      );
      lookups.set(key, lookup);
    }
    return lookup;
  },

  /**
   * Posts a movement. Returns false, changing nothing, when this kind and reference were posted
   * before. Throws INSUFFICIENT_FUNDS (and the caller's transaction must roll back) when a debit
   * would take an account that may not go negative below zero.
   */
  async post(tx: Executor, posting: Posting): Promise<boolean> {
    const lines = posting.lines.filter((line) => line.amount !== 0n);
    if (lines.length < 2 || lines.reduce((sum, line) => sum + line.amount, 0n) !== 0n) {
      throw new Error(`Unbalanced posting ${posting.kind}/${posting.reference}`);
    }
    const [created] = await tx
      .insert(ledgerPostings)
      .values({
        environment: posting.environment,
        kind: posting.kind,
        reference: posting.reference,
        description: posting.description,
      })
      .onConflictDoNothing()
      .returning({ id: ledgerPostings.id });
    if (!created) return false;
    const resolved = [];
    for (const line of lines)
      resolved.push({ accountId: await this.accountId(tx, spread(line.account)), amount: line.amount });
    resolved.sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
    for (const { accountId, amount } of resolved) {
      const [row] = await tx
        .update(ledgerAccounts)
        .set({ balance: sql`${ledgerAccounts.balance} + ${amount}` })
        .where(
          and(
            eq(ledgerAccounts.id, accountId),
            sql`(${ledgerAccounts.allowNegative} or ${ledgerAccounts.balance} + ${amount} >= 0)`,
          ),
        )
        .returning({ balance: ledgerAccounts.balance });
      if (!row) throw insufficientFunds();
      await tx.insert(ledgerEntries).values({ postingId: created.id, accountId, amount, balanceAfter: row.balance });
    }
    return true;
  },

  /**
   * Reserves `amount` of a wallet (moves it to the user's holds account); returns the hold's id.
   * One statement (ledger-sql.ts's placement, which a bill's open statement shares); throws
   * INSUFFICIENT_FUNDS, writing nothing, when the wallet holds too little.
   */
  async hold(
    tx: Executor,
    owner: { environment: Environment; userId: string },
    amount: bigint,
    reference: string,
    options: { expiresAt?: Date | undefined; transactionId?: string | undefined } = {},
  ): Promise<string> {
    const holdId = crypto.randomUUID();
    const [placed] = await runIn<{ moved: number }>(tx, PLACE_HOLD, [
      holdId,
      owner.environment,
      owner.userId,
      await this.accountId(tx, walletOf(owner.environment, owner.userId)),
      await this.accountId(tx, holdsOf(owner.environment, owner.userId)),
      amount.toString(),
      reference,
      crypto.randomUUID(),
      options.transactionId ?? null,
      options.expiresAt?.toISOString() ?? null,
    ]);
    if (!placed || placed.moved === 0) throw insufficientFunds();
    return holdId;
  },

  /**
   * Spends a hold: `fee` goes to the fees account, the rest to provider clearing. At most once:
   * returns false if the hold was already captured or released. One statement (the rule is
   * hold-settlement.ts's, which the one-statement settles of bills and payouts share).
   */
  async capture(tx: Executor, holdId: string, fee: bigint, at: Date): Promise<boolean> {
    return (await this.settleHold(tx, holdId, at, { capture: true, fee })) !== undefined;
  },

  /** Returns a hold to the wallet. At most once: false if it was already captured or released. */
  async release(tx: Executor, holdId: string, at: Date): Promise<boolean> {
    return (await this.releaseHold(tx, holdId, at)) !== undefined;
  },

  /**
   * Returns a hold to the wallet, at most once, and answers the released hold (undefined if it was
   * already settled). With `expiredBy`, only a hold whose expiry is at or before then is released.
   */
  async releaseHold(tx: Executor, holdId: string, at: Date, options: { expiredBy?: Date } = {}) {
    return this.settleHold(tx, holdId, at, { capture: false, fee: 0n, expiredBy: options.expiredBy });
  },

  /** Captures or releases a hold (hold-settlement.ts); the hold settled, or undefined when it was not `held`. */
  async settleHold(
    tx: Executor,
    holdId: string,
    at: Date,
    how: { capture: boolean; fee: bigint; expiredBy?: Date | undefined },
  ): Promise<{ id: string; transactionId: string | null } | undefined> {
    const [owner] = await runIn<{ environment: Environment; user_id: string }>(tx, HELD_HOLD_OWNER, [holdId]);
    if (!owner) return undefined;
    const { environment, user_id: userId } = owner;
    const id = (ref: AccountRef) => this.accountId(tx, spread(ref));
    const values = [
      holdId,
      how.capture,
      how.fee.toString(),
      at.toISOString(),
      crypto.randomUUID(),
      await id(holdsOf(environment, userId)),
      how.capture ? null : await id(walletOf(environment, userId)),
      how.capture ? await id(systemAccount(environment, 'provider_clearing')) : null,
      how.capture && how.fee > 0n ? await id(systemAccount(environment, 'fees')) : null,
    ];
    const [settled] = how.expiredBy
      ? await runIn<{ id: string; transaction_id: string | null }>(tx, RELEASE_EXPIRED_HOLD, [
          ...values,
          how.expiredBy.toISOString(),
        ])
      : await runIn<{ id: string; transaction_id: string | null }>(tx, SETTLE_HOLD, values);
    return settled ? { id: settled.id, transactionId: settled.transaction_id } : undefined;
  },

  /**
   * Posts the exact opposite of an earlier posting, once (kind `reversal`, reference the original's
   * id). A reversal that would overdraw an account is refused with INSUFFICIENT_FUNDS.
   */
  async reverse(tx: Executor, postingId: string, description?: string): Promise<boolean> {
    const [original] = await tx.select().from(ledgerPostings).where(eq(ledgerPostings.id, postingId));
    if (!original) throw new DomainError('NOT_FOUND', 'Ledger posting was not found.');
    const entries = await tx
      .select({
        amount: ledgerEntries.amount,
        environment: ledgerAccounts.environment,
        userId: ledgerAccounts.userId,
        code: ledgerAccounts.code,
        key: ledgerAccounts.key,
      })
      .from(ledgerEntries)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
      .where(eq(ledgerEntries.postingId, postingId));
    return this.post(tx, {
      environment: original.environment,
      kind: 'reversal',
      reference: original.id,
      description: description ?? `Reversal of ${original.kind} ${original.reference}`,
      lines: entries.map((e) => ({
        // The very row the original touched (a system account's shard included).
        account: {
          environment: e.environment,
          userId: e.userId,
          code: e.code as AccountCode,
          shard: Number(e.key.split('#')[1] ?? 0),
        },
        amount: -e.amount,
      })),
    });
  },

  async postingId(
    db: Executor,
    environment: Environment,
    kind: string,
    reference: string,
  ): Promise<string | undefined> {
    const [row] = await db
      .select({ id: ledgerPostings.id })
      .from(ledgerPostings)
      .where(
        and(
          eq(ledgerPostings.environment, environment),
          eq(ledgerPostings.kind, kind),
          eq(ledgerPostings.reference, reference),
        ),
      );
    return row?.id;
  },

  /** Available (wallet) and held balances of a user, in kobo. */
  async balances(db: Executor, environment: Environment, userId: string): Promise<{ available: bigint; held: bigint }> {
    const rows = await db
      .select({ code: ledgerAccounts.code, balance: ledgerAccounts.balance })
      .from(ledgerAccounts)
      .where(inArray(ledgerAccounts.key, [keyOf(walletOf(environment, userId)), keyOf(holdsOf(environment, userId))]));
    const of = (code: string) => rows.find((r) => r.code === code)?.balance ?? 0n;
    return { available: of('wallet'), held: of('holds') };
  },

  /** The wallet's entries, newest first, with their posting's kind and reference. */
  async walletEntries(db: Executor, environment: Environment, userId: string, limit: number, before?: Date) {
    const [account] = await db
      .select({ id: ledgerAccounts.id })
      .from(ledgerAccounts)
      .where(eq(ledgerAccounts.key, keyOf(walletOf(environment, userId))));
    if (!account) return [];
    return db
      .select({
        id: ledgerEntries.id,
        amount: ledgerEntries.amount,
        balanceAfter: ledgerEntries.balanceAfter,
        kind: ledgerPostings.kind,
        reference: ledgerPostings.reference,
        description: ledgerPostings.description,
        createdAt: ledgerEntries.createdAt,
      })
      .from(ledgerEntries)
      .innerJoin(ledgerPostings, eq(ledgerPostings.id, ledgerEntries.postingId))
      .where(and(eq(ledgerEntries.accountId, account.id), before ? lt(ledgerEntries.createdAt, before) : undefined))
      .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
      .limit(limit);
  },

  /** A system account's balance: the sum of its shards. */
  async systemBalance(db: Executor, environment: Environment, code: 'provider_clearing' | 'fees'): Promise<bigint> {
    const [row] = await db
      .select({ total: sql<string>`coalesce(sum(${ledgerAccounts.balance}), 0)` })
      .from(ledgerAccounts)
      .where(
        and(
          eq(ledgerAccounts.environment, environment),
          sql`${ledgerAccounts.userId} is null`,
          eq(ledgerAccounts.code, code),
        ),
      );
    return BigInt(row?.total ?? 0);
  },

  /** Sum of every entry of an environment: zero, always (test and audit aid). */
  async totalOf(db: Executor, environment: Environment): Promise<bigint> {
    const [row] = await db
      .select({ total: sql<string>`coalesce(sum(${ledgerEntries.amount}), 0)` })
      .from(ledgerEntries)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
      .where(eq(ledgerAccounts.environment, environment));
    return BigInt(row?.total ?? 0);
  },
};

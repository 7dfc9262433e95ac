import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import type { Environment } from '../auth/permissions.js';
import { DomainError } from '../errors.js';

/**
 * A user's accounts of one asset (`wallet`: spendable, `holds`: reserved by pending sends) and the
 * system's (`external`: the rest of the chain, `fees`: what the network was paid), which may go negative.
 */
export type AssetAccountCode = 'wallet' | 'holds' | 'external' | 'fees';

/** Where a balance of an asset lives: an environment, a chain family's network, an asset in the family's terms. */
export interface AssetPlace {
  environment: Environment;
  family: string;
  network: string;
  asset: string;
}

export interface AssetAccountRef extends AssetPlace {
  /** Null for system accounts. */
  userId: string | null;
  code: AssetAccountCode;
  /** The custodial wallet's address, kept on user accounts (reconciliation compares it with the chain). */
  address?: string | null;
  /** System accounts: which of their shards (concurrent postings of many wallets take different rows). */
  shard?: number;
}

/** How many rows each system account is spread over, as the NGN ledger's. */
export const ASSET_SYSTEM_SHARDS = 16;

export interface AssetLine {
  account: AssetAccountRef;
  /** Base units: positive credits, negative debits. */
  amount: bigint;
}

export interface AssetPosting {
  environment: Environment;
  /** hold, capture, release, arrival, swap, observed… */
  kind: string;
  /** Unique per kind: the same movement is never posted twice. */
  reference: string;
  lines: AssetLine[];
}

export const keyOf = (ref: AssetAccountRef) =>
  `${ref.environment}:${ref.userId ?? 'system'}:${ref.code}:${ref.family}:${ref.network}:${ref.asset}${ref.shard ? `#${ref.shard}` : ''}`;

const spread = (ref: AssetAccountRef): AssetAccountRef =>
  ref.userId === null && ref.shard === undefined
    ? { ...ref, shard: Math.floor(Math.random() * ASSET_SYSTEM_SHARDS) }
    : ref;

/** A user's account of an asset. */
export const userAccount = (
  place: AssetPlace,
  owner: { userId: string; address: string },
  code: 'wallet' | 'holds',
): AssetAccountRef => ({ ...place, userId: owner.userId, address: owner.address, code });

/** The system's account of an asset. */
export const systemAccount = (place: AssetPlace, code: 'external' | 'fees'): AssetAccountRef => ({
  ...place,
  userId: null,
  code,
});

export class AssetOverdrawn extends Error {
  constructor(readonly accountId: string) {
    super(`Asset account ${accountId} would go below zero.`);
  }
}

const text = (v: bigint) => v.toString();

/** The accounts named ($1: keys, then each key's environment, owner, code, family, network, asset, address): read, or made. */
const ACCOUNT_IDS = statement(
  'asset_account_ids_v1',
  `with wanted as (
     select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
       as w(key, environment, user_id, code, family, network, asset, address)
   ),
   made as (
     insert into asset_accounts (environment, user_id, code, family, network, asset, address, key, allow_negative)
     select w.environment::environment, w.user_id::uuid, w.code, w.family, w.network, w.asset, w.address, w.key, w.user_id is null
     from wanted w where not exists (select 1 from asset_accounts a where a.key = w.key)
     on conflict (key) do nothing
     returning id, key
   )
   select a.id, a.key from asset_accounts a where a.key = any($1::text[])
   union all select id, key from made`,
);

const ACCOUNTS_BY_KEY = statement(
  'asset_accounts_by_key_v1',
  'select id, key from asset_accounts where key = any($1::text[])',
);

/** The postings ($1–$4: environment, kind, reference, asset each) not posted before. */
const INSERT_POSTINGS = statement(
  'asset_postings_insert_v1',
  `insert into asset_postings (environment, kind, reference, asset)
   select p.environment::environment, p.kind, p.reference, p.asset
   from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as p(environment, kind, reference, asset)
   on conflict (kind, reference) do nothing
   returning id, kind, reference`,
);

/** The accounts a pass moves, locked in id order before any moves. */
const LOCK_ACCOUNTS = statement(
  'asset_accounts_lock_v1',
  'select id from asset_accounts where id = any($1::uuid[]) order by id for update',
);

/**
 * The moves ($1 posting, $2 account, $3 amount, $4 their order), all or none: each account moved by
 * their sum, and an entry per move with the running balance after it, unless one account would go
 * below zero (`balance + sum < 0` and it may not go negative: with credits first, the last debit's
 * guard, the strictest, is the sum's), when nothing moves. The accounts were locked by this
 * transaction (LOCK_ACCOUNTS), so the balances the guard reads are the ones the update changes.
 * Answers the accounts refused.
 */
const MOVE = statement(
  'asset_moves_v2',
  `with m as (
     select * from unnest($1::uuid[], $2::uuid[], $3::numeric[], $4::int[]) as m(posting_id, account_id, amount, ord)
   ),
   net as (select account_id, sum(amount) as amount from m group by account_id),
   refused as (
     select a.id from asset_accounts a join net on a.id = net.account_id
     where not (a.allow_negative or a.balance + net.amount >= 0)
   ),
   moved as (
     update asset_accounts a set balance = a.balance + net.amount
     from net
     where a.id = net.account_id and not exists (select 1 from refused)
     returning a.id, a.balance, net.amount as net
   ),
   entry as (
     insert into asset_entries (posting_id, account_id, amount, balance_after)
     select m.posting_id, m.account_id, m.amount,
       moved.balance - moved.net + sum(m.amount) over (partition by m.account_id order by m.ord)
     from m join moved on moved.id = m.account_id
   )
   select array(select id::text from refused order by id) as refused`,
);

/**
 * The asset ledger: the NGN ledger's rules (ledger/ledger.ts) for every chain asset, in base units.
 * Every movement is a posting of one asset whose entries sum to zero; entries are append-only (a
 * trigger refuses changes); a debit is one guarded UPDATE (`balance + amount >= 0` unless the
 * account may go negative), and accounts are touched in id order, so concurrent postings never
 * overdraw and never deadlock.
 */
export const assetLedger = {
  /** The account's id, created on first use (accountIds of one). */
  async accountId(tx: Executor, ref: AssetAccountRef): Promise<string> {
    return (await this.accountIds(tx, [ref])).get(keyOf(ref))!;
  },

  /**
   * The accounts' ids by key (keyOf), each created on first use, in one statement: accounts that
   * exist are read (a read waits for nobody), the rest inserted. An account another transaction
   * made after this statement's snapshot is read once more.
   */
  async accountIds(tx: Executor, refs: AssetAccountRef[]): Promise<Map<string, string>> {
    const wanted = new Map(refs.map((ref) => [keyOf(ref), ref]));
    const column = <T>(pick: (ref: AssetAccountRef, key: string) => T) =>
      [...wanted].map(([key, ref]) => pick(ref, key));
    const rows = await runIn<{ id: string; key: string }>(tx, ACCOUNT_IDS, [
      column((_, key) => key),
      column((ref) => ref.environment),
      column((ref) => ref.userId),
      column((ref) => ref.code),
      column((ref) => ref.family),
      column((ref) => ref.network),
      column((ref) => ref.asset),
      column((ref) => ref.address ?? null),
    ]);
    const ids = new Map(rows.map((row) => [row.key, row.id]));
    const missing = [...wanted.keys()].filter((key) => !ids.has(key));
    if (missing.length > 0)
      for (const row of await runIn<{ id: string; key: string }>(tx, ACCOUNTS_BY_KEY, [missing]))
        ids.set(row.key, row.id);
    return ids;
  },

  /** Posts one movement (postAll of one). */
  async post(tx: Executor, posting: AssetPosting): Promise<boolean> {
    return (await this.postAll(tx, [posting]))[0]!;
  },

  /**
   * Posts movements, each of one asset, in one pass over their accounts: every account the
   * postings touch is locked in id order first, so concurrent transactions, however many postings
   * each makes, take account rows in one order and never deadlock. Four statements whatever the
   * number of postings: the accounts, the postings, the locks, and the moves with their entries.
   * Answers, per posting, whether it was posted (false: this kind and reference were posted
   * before, nothing changed). Throws AssetOverdrawn when the moves would take an account that may
   * not go negative below zero: no balance moved, but the postings are written, so the caller's
   * transaction (or its savepoint) must roll back.
   */
  async postAll(tx: Executor, postings: AssetPosting[]): Promise<boolean[]> {
    const kept: Array<{ posting: AssetPosting; lines: Array<AssetLine & { account: AssetAccountRef }> }> = [];
    for (const posting of postings) {
      const lines = posting.lines.filter((line) => line.amount !== 0n);
      if (lines.length === 0) continue;
      const assets = new Set(
        lines.map((l) => `${l.account.environment}:${l.account.family}:${l.account.network}:${l.account.asset}`),
      );
      if (lines.length < 2 || assets.size !== 1 || lines.reduce((sum, l) => sum + l.amount, 0n) !== 0n)
        throw new Error(`Unbalanced asset posting ${posting.kind}/${posting.reference}`);
      kept.push({ posting, lines: lines.map((line) => ({ ...line, account: spread(line.account) })) });
    }
    if (kept.length === 0) return postings.map(() => false);
    const created = await runIn<{ id: string; kind: string; reference: string }>(tx, INSERT_POSTINGS, [
      kept.map((k) => k.posting.environment),
      kept.map((k) => k.posting.kind),
      kept.map((k) => k.posting.reference),
      kept.map((k) => k.lines[0]!.account.asset),
    ]);
    const createdId = new Map(created.map((row) => [`${row.kind}\u0000${row.reference}`, row.id]));
    // A kind and reference named twice in one call is posted once, by its first naming.
    const postingIdOf = (posting: AssetPosting) => {
      const at = `${posting.kind}\u0000${posting.reference}`;
      const id = createdId.get(at);
      createdId.delete(at);
      return id;
    };
    const moving = kept.flatMap(({ posting, lines }) => {
      const id = postingIdOf(posting);
      return id ? [{ posting, postingId: id, lines }] : [];
    });
    if (moving.length > 0) {
      const ids = await this.accountIds(
        tx,
        moving.flatMap((m) => m.lines.map((line) => line.account)),
      );
      const moves = moving.flatMap(({ postingId, lines }) =>
        lines.map((line) => ({ postingId, accountId: ids.get(keyOf(line.account))!, amount: line.amount })),
      );
      // Per account, credits before debits: each entry's balance after is the running balance in this order.
      moves.sort((a, b) =>
        a.accountId < b.accountId
          ? -1
          : a.accountId > b.accountId
            ? 1
            : a.amount > b.amount
              ? -1
              : a.amount < b.amount
                ? 1
                : 0,
      );
      const accounts = [...new Set(moves.map((m) => m.accountId))];
      await runIn(tx, LOCK_ACCOUNTS, [accounts]);
      const [result] = await runIn<{ refused: string[] }>(tx, MOVE, [
        moves.map((m) => m.postingId),
        moves.map((m) => m.accountId),
        moves.map((m) => text(m.amount)),
        moves.map((_, i) => i),
      ]);
      const [overdrawn] = result!.refused;
      if (overdrawn) throw new AssetOverdrawn(overdrawn);
    }
    const posted = new Set(moving.map((m) => m.posting));
    return postings.map((posting) => posted.has(posting));
  },

  /** A user's spendable (`wallet`) and held balances of each asset named, in base units (0 for no account). */
  async balances(
    db: Executor,
    place: Omit<AssetPlace, 'asset'>,
    userId: string,
    assets: string[],
  ): Promise<Map<string, { available: bigint; held: bigint; known: boolean }>> {
    const keys = assets.flatMap((asset) =>
      (['wallet', 'holds'] as const).map((code) => keyOf({ ...place, asset, userId, code })),
    );
    const rows = await queryRows<{ asset: string; code: string; balance: string }>(
      db,
      sql`select asset, code, balance::text as balance from asset_accounts where key in (${sql.join(
        keys.map((k) => sql`${k}`),
        sql`, `,
      )})`,
    );
    const out = new Map(assets.map((a) => [a, { available: 0n, held: 0n, known: false }]));
    for (const r of rows) {
      const entry = out.get(r.asset)!;
      entry.known = true;
      if (r.code === 'wallet') entry.available = BigInt(r.balance);
      else entry.held = BigInt(r.balance);
    }
    return out;
  },

  /** Sum of every entry of an asset on a network: zero, always (test and audit aid). */
  async totalOf(db: Executor, place: AssetPlace): Promise<bigint> {
    const [row] = await queryRows<{ total: string }>(
      db,
      sql`select coalesce(sum(e.amount), 0)::text as total from asset_entries e join asset_accounts a on a.id = e.account_id
          where a.environment = ${place.environment}::environment and a.family = ${place.family}
            and a.network = ${place.network} and a.asset = ${place.asset}`,
    );
    return BigInt(row!.total);
  },
};

export const insufficientAsset = (message: string) =>
  new DomainError('INSUFFICIENT_FUNDS', message, { field: 'amount' });

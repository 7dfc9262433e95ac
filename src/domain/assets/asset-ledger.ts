import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
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

const keyOf = (ref: AssetAccountRef) =>
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

/**
 * The asset ledger: the NGN ledger's rules (ledger/ledger.ts) for every chain asset, in base units.
 * Every movement is a posting of one asset whose entries sum to zero; entries are append-only (a
 * trigger refuses changes); a debit is one guarded UPDATE (`balance + amount >= 0` unless the
 * account may go negative), and accounts are touched in id order, so concurrent postings never
 * overdraw and never deadlock.
 */
export const assetLedger = {
  /** The account's id, created on first use (read first: a read waits for nobody). */
  async accountId(tx: Executor, ref: AssetAccountRef): Promise<string> {
    const key = keyOf(ref);
    const [known] = await queryRows<{ id: string }>(tx, sql`select id from asset_accounts where key = ${key}`);
    if (known) return known.id;
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`insert into asset_accounts (environment, user_id, code, family, network, asset, address, key, allow_negative)
          values (${ref.environment}::environment, ${ref.userId}::uuid, ${ref.code}, ${ref.family}, ${ref.network},
            ${ref.asset}, ${ref.address ?? null}, ${key}, ${ref.userId === null})
          on conflict (key) do nothing
          returning id`,
    );
    if (row) return row.id;
    // Made meanwhile by another transaction: read, not lock (a conflict's update would take the row
    // out of the id order postings lock accounts in).
    const [made] = await queryRows<{ id: string }>(tx, sql`select id from asset_accounts where key = ${key}`);
    return made!.id;
  },

  /** Posts one movement (postAll of one). */
  async post(tx: Executor, posting: AssetPosting): Promise<boolean> {
    return (await this.postAll(tx, [posting]))[0]!;
  },

  /**
   * Posts movements, each of one asset, in one pass over their accounts: every account the
   * postings touch is updated in id order (credits before debits on one account), so concurrent
   * transactions, however many postings each makes, take account rows in one order and never
   * deadlock. Answers, per posting, whether it was posted (false: this kind and reference were
   * posted before, nothing changed). Throws AssetOverdrawn (the caller's transaction must roll
   * back) when a debit would take an account that may not go negative below zero.
   */
  async postAll(tx: Executor, postings: AssetPosting[]): Promise<boolean[]> {
    const posted: boolean[] = [];
    const moves: Array<{ postingId: string; accountId: string; amount: bigint }> = [];
    for (const posting of postings) {
      const lines = posting.lines.filter((line) => line.amount !== 0n);
      if (lines.length === 0) {
        posted.push(false);
        continue;
      }
      const assets = new Set(
        lines.map((l) => `${l.account.environment}:${l.account.family}:${l.account.network}:${l.account.asset}`),
      );
      if (lines.length < 2 || assets.size !== 1 || lines.reduce((sum, l) => sum + l.amount, 0n) !== 0n)
        throw new Error(`Unbalanced asset posting ${posting.kind}/${posting.reference}`);
      const [created] = await queryRows<{ id: string }>(
        tx,
        sql`insert into asset_postings (environment, kind, reference, asset)
            values (${posting.environment}::environment, ${posting.kind}, ${posting.reference}, ${lines[0]!.account.asset})
            on conflict (kind, reference) do nothing returning id`,
      );
      posted.push(created !== undefined);
      if (!created) continue;
      for (const line of lines)
        moves.push({
          postingId: created.id,
          accountId: await this.accountId(tx, spread(line.account)),
          amount: line.amount,
        });
    }
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
    for (const { postingId, accountId, amount } of moves) {
      const [row] = await queryRows<{ balance: string }>(
        tx,
        sql`with moved as (
              update asset_accounts set balance = balance + ${text(amount)}::numeric
              where id = ${accountId}::uuid and (allow_negative or balance + ${text(amount)}::numeric >= 0)
              returning id, balance
            ),
            entry as (
              insert into asset_entries (posting_id, account_id, amount, balance_after)
              select ${postingId}::uuid, id, ${text(amount)}::numeric, balance from moved
            )
            select balance::text as balance from moved`,
      );
      if (!row) throw new AssetOverdrawn(accountId);
    }
    return posted;
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

import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import type { Environment } from '../auth/permissions.js';
import {
  AssetOverdrawn,
  type AssetPlace,
  type AssetPosting,
  assetLedger,
  keyOf,
  systemAccount,
  userAccount,
} from './asset-ledger.js';

/** A custodial wallet of one family on one network, as the asset ledger names its owner. */
export interface LedgerWallet {
  environment: Environment;
  userId: string;
  family: string;
  network: string;
  address: string;
}

/** What a send reserves of one asset: `amount` in all, of which `principal` goes to the recipient (the rest: fees at their cap). */
export interface AssetNeed {
  asset: string;
  amount: bigint;
  principal: bigint;
}

/** What a send actually took of one asset when it landed: `spent` in all, `principal` of it to the recipient. */
export interface AssetSpent {
  spent: bigint;
  principal: bigint;
}

/** A send's holds, one per asset, on the wallet's accounts the placement just moved (so they exist). */
const INSERT_HOLDS = statement(
  'asset_holds_insert_v1',
  `insert into asset_holds (environment, user_id, send_id, tx_hash, asset, wallet_account_id, holds_account_id, amount, principal)
   select $1::environment, $2::uuid, $3::uuid, $4, h.asset,
     (select id from asset_accounts where key = h.wallet_key), (select id from asset_accounts where key = h.holds_key),
     h.amount, h.principal
   from unnest($5::text[], $6::text[], $7::text[], $8::numeric[], $9::numeric[]) as h(asset, wallet_key, holds_key, amount, principal)`,
);

const placeOf = (wallet: LedgerWallet, asset: string): AssetPlace => ({
  environment: wallet.environment,
  family: wallet.family,
  network: wallet.network,
  asset,
});

interface HoldRow {
  id: string;
  environment: Environment;
  user_id: string;
  asset: string;
  amount: string;
  principal: string;
  family: string;
  network: string;
  address: string;
}

/**
 * Holds of chain sends. One design for every family, the NGN holds' contract (money/holds.ts) in
 * the asset sent and in the native coin for fees:
 *
 * - `place` in the send's recording transaction, under the wallet's lock: for each asset, the
 *   amount moves from the wallet's spendable account to its holds account; nothing is placed (and
 *   the answer names what is spendable) when any asset's spendable balance falls short.
 * - `settle` in the transaction that ends the send: captured when it landed (with what the chain
 *   says it took, or the held amounts when the chain does not say; what was held beyond that comes
 *   back), released when it never can. A guarded UPDATE of the hold's status decides, so each hold
 *   is settled exactly once, whichever of racing settlements comes first.
 * - No expiry: a send that may have been broadcast may still land. Only the send's own end (the
 *   chain's word, or its blockhash or nonce made useless) settles its holds.
 */
export const assetHolds = {
  async place(
    tx: Executor,
    wallet: LedgerWallet,
    send: { id: string; txHash: string },
    needs: AssetNeed[],
    options: {
      /** The chain's balances, read before this transaction. */
      onChain?: ReadonlyMap<string, bigint>;
      /**
       * `always`: a chain that does not post its movements, observed on every send. `opening`: one
       * that does; only an asset the ledger has never seen for this wallet (a wallet older than the
       * ledger) is opened at the chain's figure, once.
       */
      observe?: 'always' | 'opening';
      /** The caller rolls its transaction back when nothing is placed (it answers the shortfall as an error). */
      rollsBackWhenShort?: boolean;
    } = {},
  ): Promise<{ placed: true } | { placed: false; available: Map<string, bigint> }> {
    const wanted = needs.filter((n) => n.amount > 0n);
    const look = async () => {
      const balances = await assetLedger.balances(
        tx,
        wallet,
        wallet.userId,
        wanted.map((n) => n.asset),
      );
      const postings: AssetPosting[] = [];
      if (options.onChain)
        for (const [asset, figure] of balances) {
          const opening = options.observe === 'opening';
          if (opening && figure.known) continue;
          const onChain = options.onChain.get(asset) ?? 0n;
          // What the chain moved since the ledger last looked (a chain that does not post its
          // movements). Arrived: the chain's balance beyond spendable plus held. A send the chain ran
          // but the gateway has not yet settled makes the chain look lower, never higher, so nothing
          // is counted twice. Left (the key used elsewhere): the chain's balance below spendable
          // alone, as such a send accounts for at most what it holds; what more left shows once the
          // pending sends are settled. An opening only ever adds.
          const unseen =
            onChain > figure.held + figure.available
              ? onChain - figure.held - figure.available
              : !opening && onChain < figure.available
                ? onChain - figure.available
                : 0n;
          if (unseen === 0n) continue;
          const place = placeOf(wallet, asset);
          postings.push({
            environment: wallet.environment,
            kind: opening ? 'opening' : 'observed',
            // An opening happens once per wallet and asset, whichever send finds it first.
            reference: opening ? `${wallet.network}:${wallet.address}:${asset}` : `${send.id}:${asset}`,
            lines: [
              { account: systemAccount(place, 'external'), amount: -unseen },
              { account: userAccount(place, wallet, 'wallet'), amount: unseen },
            ],
          });
          figure.available += unseen;
        }
      return { balances, postings };
    };
    const shortOf = (balances: Map<string, { available: bigint }>) => ({
      placed: false as const,
      available: new Map([...balances].map(([a, b]) => [a, b.available])),
    });
    const { balances, postings } = await look();
    if (wanted.some((n) => balances.get(n.asset)!.available < n.amount)) return shortOf(balances);
    for (const need of wanted) {
      const place = placeOf(wallet, need.asset);
      postings.push({
        environment: wallet.environment,
        kind: 'hold',
        reference: `${send.id}:${need.asset}`,
        lines: [
          { account: userAccount(place, wallet, 'wallet'), amount: -need.amount },
          { account: userAccount(place, wallet, 'holds'), amount: need.amount },
        ],
      });
    }
    // One pass over the accounts, in their order (asset-ledger.ts): no deadlock with the chain's commit.
    // The balances were read unlocked: a debit that committed since (the chain's commit of a swap,
    // say) makes the guarded update refuse. That is a shortfall, not a failure: nothing of this
    // placement is kept, and the answer names what is spendable now. A refused pass moves no
    // balance but leaves its postings, so it runs under a savepoint, unless the caller's whole
    // transaction rolls back on a shortfall anyway.
    const guarded = !options.rollsBackWhenShort;
    if (guarded) await queryRows(tx, sql`savepoint asset_hold_place`);
    try {
      await assetLedger.postAll(tx, postings);
    } catch (error) {
      if (!(error instanceof AssetOverdrawn)) throw error;
      if (guarded) await queryRows(tx, sql`rollback to savepoint asset_hold_place`);
      return shortOf((await look()).balances);
    }
    if (guarded) await queryRows(tx, sql`release savepoint asset_hold_place`);
    const keys = (code: 'wallet' | 'holds') =>
      wanted.map((need) => keyOf(userAccount(placeOf(wallet, need.asset), wallet, code)));
    await runIn(tx, INSERT_HOLDS, [
      wallet.environment,
      wallet.userId,
      send.id,
      send.txHash,
      wanted.map((need) => need.asset),
      keys('wallet'),
      keys('holds'),
      wanted.map((need) => need.amount.toString()),
      wanted.map((need) => need.principal.toString()),
    ]);
    return { placed: true };
  },

  /**
   * Ends a send's holds, once: `release` gives them back; `capture` spends them, each asset by
   * what `spent` names for it (absent: as held). Returns how many holds it settled (0 when they
   * were settled before, or the send held nothing).
   */
  async settle(
    tx: Executor,
    where: { sendId: string } | { txHash: string },
    how: { release: true } | { capture: ReadonlyMap<string, AssetSpent> },
    at: Date,
  ): Promise<number> {
    const postings = await this.settlements(tx, where, how, at);
    await assetLedger.postAll(tx, postings);
    return postings.length;
  },

  /**
   * `settle`'s guarded status moves, answering the postings that go with them for the caller to
   * post in the same pass as its own (asset-ledger.ts postAll): one posting per hold settled.
   */
  async settlements(
    tx: Executor,
    where: { sendId: string } | { txHash: string },
    how: { release: true } | { capture: ReadonlyMap<string, AssetSpent> },
    at: Date,
  ): Promise<AssetPosting[]> {
    const status = 'release' in how ? 'released' : 'captured';
    const filter = 'sendId' in where ? sql`h.send_id = ${where.sendId}::uuid` : sql`h.tx_hash = ${where.txHash}`;
    const settled = await queryRows<HoldRow>(
      tx,
      sql`update asset_holds h set status = ${status}::asset_hold_status, settled_at = ${at.toISOString()}::timestamptz
          from asset_accounts a
          where ${filter} and h.status = 'held' and a.id = h.wallet_account_id
          returning h.id, h.environment, h.user_id, h.asset, h.amount::text as amount, h.principal::text as principal,
            a.family, a.network, a.address`,
    );
    const postings: AssetPosting[] = [];
    for (const hold of settled) {
      const wallet: LedgerWallet = {
        environment: hold.environment,
        userId: hold.user_id,
        family: hold.family,
        network: hold.network,
        address: hold.address,
      };
      const place = placeOf(wallet, hold.asset);
      const amount = BigInt(hold.amount);
      const holds = { account: userAccount(place, wallet, 'holds'), amount: -amount };
      if ('release' in how) {
        postings.push({
          environment: wallet.environment,
          kind: 'release',
          reference: hold.id,
          lines: [holds, { account: userAccount(place, wallet, 'wallet'), amount }],
        });
        continue;
      }
      const took = how.capture.get(hold.asset) ?? { spent: amount, principal: BigInt(hold.principal) };
      postings.push({
        environment: wallet.environment,
        kind: 'capture',
        reference: hold.id,
        lines: [
          holds,
          { account: systemAccount(place, 'external'), amount: took.principal },
          { account: systemAccount(place, 'fees'), amount: took.spent - took.principal },
          // What was held beyond what it took comes back (a cap above the fee, rent not needed).
          { account: userAccount(place, wallet, 'wallet'), amount: amount - took.spent },
        ],
      });
    }
    return postings;
  },

  /** Whether any hold of this transaction is still held (its capture is still to come). */
  async openFor(db: Executor, txHash: string): Promise<boolean> {
    const rows = await queryRows(
      db,
      sql`select 1 from asset_holds where tx_hash = ${txHash} and status = 'held' limit 1`,
    );
    return rows.length > 0;
  },
};

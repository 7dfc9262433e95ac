import { sql } from 'drizzle-orm';
import { queryRows, type Tx } from '../../db/client.js';
import { type AssetSpent, assetHolds } from '../assets/asset-holds.js';
import {
  AssetOverdrawn,
  type AssetPosting,
  assetLedger,
  insufficientAsset,
  systemAccount,
  userAccount,
} from '../assets/asset-ledger.js';
import type { SolanaNetwork } from './networks.js';
import type { BalanceMove, ChainEffect } from './sandbox-chain-work.js';
import { SOLANA } from './transfer-store.js';

/**
 * The sandbox chain's half of the asset ledger: in the commit that records a change of the chain,
 * every balance a transaction moved of a custodial wallet is posted, so the ledger and the chain
 * agree whatever ran the transaction (a send, a swap, the faucet, an incoming transfer, a test).
 *
 * - A send's holds (placed when it was recorded) are captured by what the chain says it took of
 *   each held asset: its amount and the fee actually charged, the rest of the cap back to the wallet.
 * - Everything else a wallet gained or lost in the transaction (an arrival, a faucet grant, a
 *   swap's input and output, rent paid or reclaimed) is posted against the network's `external`
 *   account, kind `chain`, once per transaction, wallet and asset.
 *
 * - A wallet and asset the ledger has never seen (a wallet older than the ledger) is first opened
 *   at the chain's figure from before the transaction, as a send opens it (asset-holds.ts): kind
 *   `opening`, reference `network:address:asset`, so whichever comes first opens it, once.
 *
 * A loss the wallet's spendable balance does not cover (money held for another send) refuses the
 * whole change: nothing lands on the chain and the caller is told what is spendable.
 */
export function sandboxLedgerPoster(environment: 'sandbox' = 'sandbox') {
  return async (tx: Tx, network: SolanaNetwork, effects: ChainEffect[]): Promise<void> => {
    const owners = [...new Set(effects.flatMap((e) => e.moves.map((m) => m.owner)))];
    if (owners.length === 0) return;
    const wallets = new Map(
      (
        await queryRows<{ user_id: string; address: string }>(
          tx,
          sql`select user_id, address from solana_wallets where environment = ${environment}::environment
              and address in (${sql.join(
                owners.map((o) => sql`${o}`),
                sql`, `,
              )})`,
        )
      ).map((w) => [w.address, w.user_id]),
    );
    if (wallets.size === 0) return;
    // Every posting of the commit in one pass over the accounts, in their order (asset-ledger.ts).
    const postings: AssetPosting[] = [];
    const looked = new Set<string>();
    for (const effect of effects) {
      const moves = effect.moves.filter((m) => wallets.has(m.owner));
      if (moves.length === 0) continue;
      // A wallet older than the ledger is opened at the chain's figure by whatever moves it first
      // (not only a send): the change alone would leave the ledger short of the chain for good.
      for (const move of moves) {
        const key = `${move.owner} ${move.asset}`;
        if (looked.has(key)) continue;
        looked.add(key);
        const opening = await openingOf(tx, environment, network, wallets.get(move.owner)!, move);
        if (opening) postings.push(opening);
      }
      const residual = new Map(moves.map((m) => [`${m.owner} ${m.asset}`, m.delta]));
      // The send's row before its holds: the order its confirmation job settles them in (the move,
      // chain-send-store.ts, then its holds). A re-broadcast landing while the job settles the send
      // waits here for the job's commit, then finds the send and its holds settled.
      await queryRows(
        tx,
        sql`select 1 from chain_sends where family = ${SOLANA} and tx_hash = ${effect.signature} and status = 'pending'
            for update`,
      );
      const holds = await queryRows<{ address: string; asset: string; amount: string; principal: string }>(
        tx,
        sql`select a.address, h.asset, h.amount::text as amount, h.principal::text as principal
            from asset_holds h join asset_accounts a on a.id = h.wallet_account_id
            where h.tx_hash = ${effect.signature} and h.status = 'held' for update of h`,
      );
      if (holds.length > 0) {
        const capture = new Map<string, AssetSpent>();
        for (const hold of holds) {
          const key = `${hold.address} ${hold.asset}`;
          const delta = residual.get(key) ?? 0n;
          const held = BigInt(hold.amount);
          // Exactly what left the wallet, when it is the hold's own; otherwise (a swap paid out in
          // the asset of its fee) as held, and what else moved is posted beside it.
          const spent = delta < 0n && -delta <= held ? -delta : held;
          const principal = BigInt(hold.principal) < spent ? BigInt(hold.principal) : spent;
          capture.set(hold.asset, { spent, principal });
          residual.set(key, delta + spent);
        }
        postings.push(...(await assetHolds.settlements(tx, { txHash: effect.signature }, { capture }, new Date())));
      }
      for (const [key, delta] of residual) {
        if (delta === 0n) continue;
        const [address, asset] = key.split(' ') as [string, string];
        const owner = { userId: wallets.get(address)!, address };
        const place = { environment, family: SOLANA, network, asset };
        postings.push({
          environment,
          kind: 'chain',
          reference: `${network}:${effect.signature}:${address}:${asset}`,
          lines: [
            { account: userAccount(place, owner, 'wallet'), amount: delta },
            { account: systemAccount(place, 'external'), amount: -delta },
          ],
        });
      }
    }
    try {
      await assetLedger.postAll(tx, postings);
    } catch (error) {
      if (!(error instanceof AssetOverdrawn)) throw error;
      const [account] = await queryRows<{ asset: string; balance: string }>(
        tx,
        sql`select asset, balance::text as balance from asset_accounts where id = ${error.accountId}::uuid`,
      );
      throw insufficientAsset(
        `Insufficient spendable balance on ${network}: ${account?.balance ?? 0} base units of ${account?.asset ?? 'the asset'} available (the rest is held for pending sends).`,
      );
    }
  };
}

/**
 * The opening of a wallet's asset the ledger has no account of yet, at what the chain held before
 * the transaction that moves it first (none when that was nothing: the change itself opens it).
 */
async function openingOf(
  tx: Tx,
  environment: 'sandbox',
  network: SolanaNetwork,
  userId: string,
  move: BalanceMove,
): Promise<AssetPosting | undefined> {
  if (move.before <= 0n) return undefined;
  const place = { environment, family: SOLANA, network, asset: move.asset };
  const [figure] = (await assetLedger.balances(tx, place, userId, [move.asset])).values();
  if (figure!.known) return undefined;
  return {
    environment,
    kind: 'opening',
    reference: `${network}:${move.owner}:${move.asset}`,
    lines: [
      { account: systemAccount(place, 'external'), amount: -move.before },
      { account: userAccount(place, { userId, address: move.owner }, 'wallet'), amount: move.before },
    ],
  };
}

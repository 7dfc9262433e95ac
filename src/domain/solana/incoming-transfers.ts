import { and, eq, inArray } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { solanaWallets } from '../../db/solana-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { recordEvent } from '../events/outbox.js';
import type { Arrival, ExecutionListener } from './chain.js';
import { transitionChainSend } from './chain-sends.js';
import { sending, transferStore } from './transfer-store.js';
import type { SolanaNetwork } from './networks.js';
import { SOL_MINT } from './native-token.js';
import { decimalFromRaw } from './token-amounts.js';

/**
 * What a sandbox transaction did, recorded with the chain's new state: the sender's pending
 * transfer moves to confirmed (its lifecycle's move, history and event) in that commit (so its hold and the chain's balance never count the same
 * money twice), and arrivals are told.
 */
export function sandboxExecutionRecorder(clock: Clock): ExecutionListener {
  const arrivals = incomingTransferRecorder('sandbox', clock);
  return async (tx, network, executed) => {
    const now = clock.now();
    // The sender's own send is in hand (no read); one from elsewhere is found by its signature.
    const own = sending.get(executed.signature);
    const pending = own?.row ?? (await transferStore.findPendingByHash(tx, executed.signature));
    if (pending) await transitionChainSend(tx, pending, 'confirmed', now, { answer: own?.answer });
    if (executed.arrivals.length > 0) await arrivals(tx, network, executed.arrivals);
  };
}

/**
 * Money arriving at a custodial wallet from someone else: `transaction.completed` for its user,
 * in the transaction that records the chain's new state (so it is told exactly once).
 */
export function incomingTransferRecorder(environment: Environment, clock: Clock) {
  return async (tx: Tx, network: SolanaNetwork, arrivals: Arrival[]): Promise<void> => {
    const owners = [...new Set(arrivals.map((a) => a.owner))];
    const wallets = await tx
      .select({ userId: solanaWallets.userId, address: solanaWallets.address })
      .from(solanaWallets)
      .where(and(eq(solanaWallets.environment, environment), inArray(solanaWallets.address, owners)));
    const now = clock.now();
    for (const arrival of arrivals) {
      const wallet = wallets.find((w) => w.address === arrival.owner);
      if (!wallet) continue;
      await recordEvent(
        tx,
        {
          type: 'transaction.completed',
          userId: wallet.userId,
          environment,
          data: {
            type: 'CRYPTO_DEPOSIT',
            status: 'COMPLETED',
            reference: arrival.signature,
            signature: arrival.signature,
            network,
            asset: arrival.mint === SOL_MINT ? 'SOL' : 'SPL',
            mint: arrival.mint,
            amount: decimalFromRaw(arrival.amountRaw, arrival.decimals),
            amountRaw: arrival.amountRaw.toString(),
            from: arrival.from,
            to: arrival.owner,
            updatedAt: now.toISOString(),
          },
        },
        now,
      );
    }
  };
}

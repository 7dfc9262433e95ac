import type { Executor } from '../../db/client.js';
import { solanaTransfers } from '../../db/solana-schema.js';
import { chainSendLifecycles, type KeyAnswer, transitionChainSend as transitionSend } from '../chain/chain-sends.js';
import { transferEventData } from './transfer-events.js';
import { transferStore } from './transfer-store.js';

type ChainSendRow = typeof solanaTransfers.$inferSelect;

/**
 * Solana's chain sends (SOL or token) and swaps on the core's state tables (chain/chain-sends.ts),
 * on solana_transfers, each move's `transaction.*` event carrying the chain's fields (signature,
 * network, amounts). Born `pending` with `transaction.created`, which the service writes with the record.
 */
const LIFECYCLES = chainSendLifecycles<ChainSendRow>(solanaTransfers, transferEventData);

export const CHAIN_SEND = LIFECYCLES.send;
export const SWAP = LIFECYCLES.swap;

/** The lifecycle of a stored outgoing Solana transaction, by its kind. */
export const chainSendLifecycle = LIFECYCLES.of;

/** The core's `transitionChainSend` on Solana's store (one statement: transfer-store.ts MOVE). */
export function transitionChainSend(
  tx: Executor,
  row: ChainSendRow,
  to: ChainSendRow['status'],
  at: Date,
  changes: { error?: string | null; answer?: KeyAnswer } = {},
): Promise<ChainSendRow | undefined> {
  return transitionSend(transferStore, LIFECYCLES, tx, row, to, at, changes);
}

import type { Executor } from '../../db/client.js';
import { chainSendLifecycles, type KeyAnswer, transitionChainSend as transitionSend } from '../chain/chain-sends.js';
import { transferEventData } from './transfer-events.js';
import { type SolanaTransferRow, transferStore } from './transfer-store.js';

/**
 * Solana's chain sends (SOL or token) and swaps on the core's state tables (chain/chain-sends.ts),
 * on chain_sends, each move's `transaction.*` event carrying the chain's fields (signature,
 * network, amounts). Born `pending` with `transaction.created`, which the service writes with the
 * record. A Solana transaction carries no nonce (a blockhash bounds its life), so none is replaced.
 */
const LIFECYCLES = chainSendLifecycles<SolanaTransferRow>(transferEventData, { replaceable: false });

export const CHAIN_SEND = LIFECYCLES.send;
export const SWAP = LIFECYCLES.swap;

/** The lifecycle of a stored outgoing Solana transaction, by its kind. */
export const chainSendLifecycle = LIFECYCLES.of;

/** The core's `transitionChainSend` on Solana's store (one statement: chain/chain-send-store.ts MOVE). */
export function transitionChainSend(
  tx: Executor,
  row: SolanaTransferRow,
  to: SolanaTransferRow['status'],
  at: Date,
  changes: { error?: string | null; answer?: KeyAnswer } = {},
): Promise<SolanaTransferRow | undefined> {
  return transitionSend(transferStore, LIFECYCLES, tx, row, to, at, changes);
}

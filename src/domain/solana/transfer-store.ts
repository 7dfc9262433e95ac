import type { ChainSendRow, NewChainSend } from '../../db/chain-schema.js';
import type { Executor } from '../../db/client.js';
import { chainSendStore, insertChainSend } from '../chain/chain-send-store.js';
import type { KeyAnswer } from '../chain/chain-sends.js';
import { transferEventData } from './transfer-events.js';

/** An outgoing Solana transaction: the core's chain send with family `solana` (lamports are its native units). */
export type SolanaTransferRow = ChainSendRow;

/** The family name Solana's rows carry in chain_sends (and custody keys its wallets by). */
export const SOLANA = 'solana';

/** The job that follows a stored transaction until it is final (re-broadcasts, expiry); its id is the transfer's. */
export const CONFIRM_JOB = 'solana.confirm';

/**
 * Sends this process is sending right now, by signature: the row as recorded (pending) and the key
 * to answer when the sandbox chain confirms it. The chain's commit moves the send from the row in
 * hand (no read by signature) and answers the key in that commit, so the sender commits nothing
 * after the send. A send re-broadcast by another process is found by its signature instead.
 */
export const sending = new Map<string, { row: SolanaTransferRow; answer?: KeyAnswer }>();

/** Outgoing Solana transactions: the core's chain-send store on chain_sends, for family `solana`. */
export const transferStore = chainSendStore({
  family: SOLANA,
  walletTable: 'solana_wallets',
  confirmJob: CONFIRM_JOB,
  eventData: transferEventData,
});

/** Inserts a Solana send as it is (a sandbox swap, recorded executed with the chain's new state). Not on the transfer path. */
export function insertTransfer(db: Executor, row: Omit<NewChainSend, 'family'>): Promise<SolanaTransferRow> {
  return insertChainSend(db, { ...row, family: SOLANA });
}

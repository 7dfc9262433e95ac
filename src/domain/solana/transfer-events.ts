import type { Executor } from '../../db/client.js';
import { CHAIN_SEND_EVENT } from '../chain/chain-send-store.js';
import { recordEvent } from '../events/outbox.js';
import { explorerUrl, type SolanaNetwork } from './networks.js';
import { SOL_MINT } from './native-token.js';
import { decimalFromRaw } from './token-amounts.js';
import type { SolanaTransferRow } from './transfer-store.js';

/** The event an outgoing Solana transaction's state is told by. */
export const TRANSFER_EVENT_TYPE = CHAIN_SEND_EVENT;

/** `data` of an outgoing Solana transaction's `transaction.*` events: one builder for every producer. */
export function transferEventData(row: SolanaTransferRow): Record<string, unknown> {
  return {
    type: row.kind === 'swap' ? 'CRYPTO_SWAP' : 'CRYPTO_TRANSFER',
    status: row.status.toUpperCase(),
    reference: row.txHash,
    signature: row.txHash,
    network: row.network,
    mint: row.asset ?? SOL_MINT,
    amount: decimalFromRaw(row.amountRaw, row.decimals),
    amountRaw: row.amountRaw.toString(),
    from: row.fromAddress,
    to: row.toAddress,
    ...(row.outputAsset ? { outputMint: row.outputAsset, outputAmountRaw: row.outputAmountRaw?.toString() } : {}),
    error: row.error,
    txUrl: explorerUrl(row.txHash, row.network as SolanaNetwork, row.environment),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * `transaction.*` for an outgoing Solana transaction that is born in its state (a sandbox swap,
 * executed and recorded in one commit); moves between states emit theirs through the chain-send
 * lifecycle (src/domain/solana/chain-sends.ts).
 */
export async function recordTransferEvent(tx: Executor, row: SolanaTransferRow, at: Date): Promise<void> {
  await recordEvent(
    tx,
    {
      type: TRANSFER_EVENT_TYPE[row.status],
      userId: row.userId,
      environment: row.environment,
      data: transferEventData(row),
    },
    at,
  );
}

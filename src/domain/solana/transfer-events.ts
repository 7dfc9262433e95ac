import type { Executor } from '../../db/client.js';
import { recordEvent } from '../events/outbox.js';
import { explorerUrl, type SolanaNetwork } from './networks.js';
import { SOL_MINT } from './sandbox-world.js';
import { decimalFromRaw } from './token-amounts.js';
import type { SolanaTransferRow } from './transfer-store.js';

const TYPE = {
  pending: 'transaction.created',
  confirmed: 'transaction.completed',
  failed: 'transaction.failed',
} as const;

/** `transaction.*` for an outgoing Solana transaction, in the transaction that changes its state. */
export async function recordTransferEvent(tx: Executor, row: SolanaTransferRow, at: Date): Promise<void> {
  await recordEvent(
    tx,
    {
      type: TYPE[row.status],
      userId: row.userId,
      environment: row.environment,
      data: {
        type: row.kind === 'swap' ? 'CRYPTO_SWAP' : 'CRYPTO_TRANSFER',
        status: row.status.toUpperCase(),
        reference: row.signature,
        signature: row.signature,
        network: row.network,
        mint: row.mint ?? SOL_MINT,
        amount: decimalFromRaw(row.amountRaw, row.decimals),
        amountRaw: row.amountRaw.toString(),
        from: row.fromAddress,
        to: row.toAddress,
        ...(row.outputMint ? { outputMint: row.outputMint, outputAmountRaw: row.outputAmountRaw?.toString() } : {}),
        error: row.error,
        txUrl: explorerUrl(row.signature, row.network as SolanaNetwork, row.environment),
        updatedAt: row.updatedAt.toISOString(),
      },
    },
    at,
  );
}

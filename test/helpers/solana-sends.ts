import type { Executor } from '../../src/db/client.js';
import { SIGNATURE_FEE } from '../../src/domain/solana/transfer-service.js';
import { insertTransfer, type SolanaTransferRow } from '../../src/domain/solana/transfer-store.js';

/** A SOL send on devnet as a sandbox wallet signed it: who, to whom, how much, and its signed bytes. */
export interface SignedSolSend {
  userId: string;
  from: string;
  to: string;
  amountRaw: bigint;
  signature: string;
  wire: Uint8Array;
}

/**
 * The send stored `pending`, as the send path records it before it is broadcast (one signature's
 * fee), with its blockhash's last valid height and its creation time as the test needs them.
 */
export function storePendingSolSend(
  db: Executor,
  send: SignedSolSend,
  stored: { validThroughHeight: bigint; createdAt: Date },
): Promise<SolanaTransferRow> {
  return insertTransfer(db, {
    userId: send.userId,
    environment: 'sandbox',
    network: 'devnet',
    kind: 'native',
    fromAddress: send.from,
    toAddress: send.to,
    asset: null,
    amountRaw: send.amountRaw,
    decimals: 9,
    feeRaw: SIGNATURE_FEE,
    txHash: send.signature,
    wire: Buffer.from(send.wire).toString('base64'),
    validThroughHeight: stored.validThroughHeight,
    status: 'pending',
    createdAt: stored.createdAt,
    updatedAt: stored.createdAt,
  });
}

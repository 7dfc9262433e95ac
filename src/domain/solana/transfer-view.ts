import { randomBytes } from 'node:crypto';
import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { explorerUrl, type SolanaNetwork } from './networks.js';
import { SOL_MINT } from './native-token.js';
import { decimalFromRaw } from './token-amounts.js';
import type { SolanaTransferRow } from './transfer-store.js';

/** An outgoing Solana transaction as the API shows it. */
export interface TransferView {
  id: string;
  signature: string;
  status: 'pending' | 'confirmed' | 'failed';
  network: SolanaNetwork;
  kind: 'sol' | 'token' | 'swap';
  from: string;
  to: string;
  mint: string;
  amount: string;
  amountRaw: bigint;
  error: string | null;
  txUrl: string;
  createdAt: Date;
}

export function transferView(row: SolanaTransferRow): TransferView {
  const network = row.network as SolanaNetwork;
  return {
    id: row.id,
    signature: row.txHash,
    // A Solana send carries no nonce, so none is ever replaced; were one, nothing it asked for happened.
    status: row.status === 'replaced' ? 'failed' : row.status,
    network,
    // Approvals are an EVM swap's leg: a Solana send is never one.
    kind: row.kind === 'native' ? 'sol' : row.kind === 'approve' ? 'token' : row.kind,
    from: row.fromAddress,
    to: row.toAddress,
    mint: row.asset ?? SOL_MINT,
    amount: decimalFromRaw(row.amountRaw, row.decimals),
    amountRaw: row.amountRaw,
    error: row.error,
    txUrl: explorerUrl(row.txHash, network, row.environment),
    createdAt: row.createdAt,
  };
}

/**
 * Adds a fresh random key as a read-only account of the instruction (Solana Pay's "reference";
 * the programs ignore it). Without it two identical transfers under one blockhash would be one
 * transaction with one signature, and the second request would silently be the first. Random
 * bytes, not a generated keypair: nothing signs for it, and a keypair costs a curve multiplication.
 */
export function withReference(instruction: TransactionInstruction): TransactionInstruction {
  instruction.keys.push({ pubkey: new PublicKey(randomBytes(32)), isSigner: false, isWritable: false });
  return instruction;
}

import { getBase58Decoder } from '@solana/kit';
import { PublicKey, type Transaction, VersionedTransaction } from '@solana/web3.js';
import type { SignedTransfer } from '../chain/family.js';
import { signLegacy } from './legacy-signing.js';

const base58 = getBase58Decoder();

/**
 * Signs a transaction as `signer` (its fee payer) with `sign`, the custody's ed25519 signature of a
 * message: the wire bytes to store and send, and the first signature, the transaction's id.
 */
export async function signTransaction(
  transaction: Transaction | VersionedTransaction,
  signer: string,
  sign: (message: Uint8Array) => Promise<Uint8Array>,
): Promise<SignedTransfer> {
  const key = new PublicKey(signer);
  if (transaction instanceof VersionedTransaction) {
    transaction.addSignature(key, await sign(transaction.message.serialize()));
    return { wire: transaction.serialize(), hash: base58.decode(transaction.signatures[0]!) };
  }
  // Not verified again in JavaScript (a millisecond of curve arithmetic): node's ed25519 just made
  // it with the wallet's key, and a chain refuses a bad signature anyway.
  const signed = await signLegacy(transaction, key, sign);
  return { wire: signed.wire, hash: base58.decode(signed.firstSignature) };
}

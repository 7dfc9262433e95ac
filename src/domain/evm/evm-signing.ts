import {
  type Hex,
  keccak256,
  parseTransaction,
  serializeTransaction,
  type TransactionSerializableEIP1559,
  toHex,
} from 'viem';
import type { FamilySigning, PreparedTransfer, SignedTransfer } from '../chain/family.js';

/** An EIP-1559 (type 2) transaction as the family builds it, before signing. */
export type EvmUnsigned = TransactionSerializableEIP1559 & {
  chainId: number;
  nonce: number;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
};

/** The wire bytes of an unsigned type-2 transaction: what the family hands the core as `PreparedTransfer.unsigned`. */
export function prepareEvm(transaction: EvmUnsigned, signer: string): PreparedTransfer {
  return { unsigned: hexBytes(serializeTransaction(transaction)), signer };
}

/**
 * Signs a prepared type-2 transaction: the custody signs the keccak-256 hash of its unsigned
 * serialization (the digest itself, not hashed again) and answers 65 bytes, r ‖ s ‖ recovery id
 * (0 or 1), which become the transaction's r, s and yParity. The hash of the signed bytes is the
 * transaction's hash on chain.
 */
export const evmSigning: FamilySigning = {
  async sign(prepared, sign): Promise<SignedTransfer> {
    const parsed = parseTransaction(toHex(prepared.unsigned));
    if (parsed.type !== 'eip1559') throw new Error(`An EVM send is a type-2 transaction, not ${parsed.type}.`);
    const digest = hexBytes(keccak256(toHex(prepared.unsigned)));
    const signature = await sign(digest);
    if (signature.length !== 65 || signature[64]! > 1)
      throw new Error('An EVM custody signs with 65 bytes: r, s and a recovery id of 0 or 1.');
    const signed = serializeTransaction(parsed as TransactionSerializableEIP1559, {
      r: toHex(signature.subarray(0, 32)),
      s: toHex(signature.subarray(32, 64)),
      yParity: signature[64]!,
    });
    return { wire: hexBytes(signed), hash: keccak256(signed) };
  },
};

export const hexBytes = (hex: Hex): Uint8Array => Buffer.from(hex.slice(2), 'hex');

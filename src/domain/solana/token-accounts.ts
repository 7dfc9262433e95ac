import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { LRUCache } from 'lru-cache';
import { addressOf } from './key-addresses.js';

/**
 * Associated token account addresses, remembered. Deriving one is a program-address search (SHA-256
 * and an ed25519 curve check per try, about a millisecond of CPU); a quote needs several, always for
 * the same pools and wallets. Profiling put it at most of a sandbox quote's CPU.
 */
const cache = new LRUCache<string, PublicKey>({ max: 50_000 });

export function associatedTokenAddress(mint: PublicKey | string, owner: PublicKey | string): PublicKey {
  const key = `${mint.toString()}:${owner.toString()}`;
  let found = cache.get(key);
  if (!found) {
    found = getAssociatedTokenAddressSync(
      typeof mint === 'string' ? new PublicKey(mint) : mint,
      typeof owner === 'string' ? new PublicKey(owner) : owner,
      true,
    );
    cache.set(key, found);
  }
  return found;
}

/** An SPL token account's mint, owner and amount, from its data. */
export function parseTokenAccount(data: ArrayLike<number>): { mint: string; owner: string; amount: bigint } {
  const view = Buffer.from(Uint8Array.from(data));
  return {
    mint: addressOf(view.subarray(0, 32)),
    owner: addressOf(view.subarray(32, 64)),
    amount: view.readBigUInt64LE(64),
  };
}

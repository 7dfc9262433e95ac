import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { LRUCache } from 'lru-cache';

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

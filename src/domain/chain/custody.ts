import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';

/**
 * A custodial key: one per user, environment and family, its secret sealed under the
 * environment's master keyring (keyring.ts) and opened only to sign.
 */
export interface CustodialKey {
  id: string;
  userId: string;
  environment: Environment;
  /** The address the key controls, in the family's own notation. */
  address: string;
  /** The master key version that wraps its data key. */
  keyVersion: number;
}

/** Signs for a custodial key. AES-GCM with configured master keys today; a KMS can replace it. */
export interface Signer<Key extends CustodialKey = CustodialKey> {
  /** The signature of `message` by the key's secret, in the family's scheme (ed25519, secp256k1). */
  sign(key: Key, message: Uint8Array): Promise<Uint8Array>;
}

/** A family's custodial keys: the caller's, created on first use, and signing with them. */
export interface Custody<Key extends CustodialKey = CustodialKey> extends Signer<Key> {
  walletOf(principal: Principal): Promise<Key>;
}

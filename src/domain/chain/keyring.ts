import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Environment } from '../auth/permissions.js';
import { DomainError } from '../errors.js';

/**
 * The master keys of one environment, by version, that seal every chain family's custodial keys
 * (Solana's are configured as `SOLANA_MASTER_KEYS_<ENV>`):
 * comma-separated `version:base64key` (32 bytes each); the highest version wraps new data keys,
 * every listed version can still unwrap, so a rotation adds a version, re-wraps
 * (`npm run admin -- rewrap-wallet-keys --env …`), then drops the old one.
 */
export class MasterKeyring {
  private constructor(private readonly keys: ReadonlyMap<number, Buffer>) {}

  static parse(spec: string | undefined, variable: string): MasterKeyring | undefined {
    if (!spec) return undefined;
    const keys = new Map<number, Buffer>();
    for (const entry of spec
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)) {
      const match = /^(\d+):([A-Za-z0-9+/]{43}=)$/.exec(entry);
      if (!match)
        throw new Error(`${variable}: each entry must be version:base64 of 32 bytes (openssl rand -base64 32)`);
      keys.set(Number(match[1]), Buffer.from(match[2]!, 'base64'));
    }
    return keys.size ? new MasterKeyring(keys) : undefined;
  }

  /** A fixed development keyring for sandbox when none is configured (never used in production). */
  static development(environment: Environment): MasterKeyring {
    return new MasterKeyring(
      new Map([[1, createHash('sha256').update(`partner-gateway development master key ${environment}`).digest()]]),
    );
  }

  get currentVersion(): number {
    return Math.max(...this.keys.keys());
  }

  has(version: number): boolean {
    return this.keys.has(version);
  }

  key(version: number): Buffer {
    const key = this.keys.get(version);
    if (!key)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        `Master key version ${version} is not configured; add it back to unwrap this wallet.`,
      );
    return key;
  }
}

/** AES-256-GCM with a random IV and additional authenticated data: IV ‖ ciphertext ‖ tag, base64. */
export function seal(key: Buffer, plaintext: Buffer, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]).toString('base64');
}

/** Opens what `seal` made; a tampered ciphertext, another AAD or another key throws. */
export function open(key: Buffer, sealed: string, aad: string): Buffer {
  const data = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
}

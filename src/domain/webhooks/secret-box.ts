import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encrypts secrets the service must be able to use again (webhook signing secrets), with
 * AES-256-GCM under a key from configuration, never stored in the database. Each ciphertext is
 * bound to what it belongs to (additional authenticated data), so a ciphertext copied onto another
 * row fails to decrypt. Format: v1.<iv>.<tag>.<ciphertext>, base64url.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The secrets key must be 32 bytes');
    this.key = key;
  }

  /** From SECRETS_KEY (32 bytes, base64), or a fixed key for development only. */
  static fromConfig(secretsKey: string | undefined): SecretBox {
    if (secretsKey) return new SecretBox(Buffer.from(secretsKey, 'base64'));
    return new SecretBox(createHash('sha256').update('partner-gateway development secrets key').digest());
  }

  /** A key for another purpose (CSRF tokens, say), derived with HKDF so it never equals this one. */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), purpose, 32));
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ciphertext.toString('base64url'),
    ].join('.');
  }

  open(sealed: string, boundTo: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('Unrecognised sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

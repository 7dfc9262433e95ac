import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Bearer secrets (API keys, sessions, mailed links, OAuth codes and tokens, client secrets): a
 * prefix that says what the value is (for people and secret scanners), then 256 random bits.
 * Only the SHA-256 is stored: with that much entropy a slow hash adds nothing, and a lookup stays
 * one indexed equality.
 */
export function newOpaqueToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/**
 * The SHA-256 of a value, in hex. One-shot `hash` rather than createHash().update().digest(): every
 * authenticated request hashes its key, and the one-shot form costs about a third as much.
 */
export function digestOf(value: string): string {
  return hash('sha256', value, 'hex');
}

/** True when `value` is `prefix` followed by a 256-bit base64url body: anything else skips the lookup. */
export function hasTokenShape(value: string, prefix: string): boolean {
  return (
    value.length === prefix.length + 43 &&
    value.startsWith(prefix) &&
    /^[A-Za-z0-9_-]{43}$/.test(value.slice(prefix.length))
  );
}

/** Constant-time equality of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}

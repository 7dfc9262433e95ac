import { hash, verify } from '@node-rs/argon2';
import { badInput } from '../errors.js';

/**
 * Passwords and transaction PINs are hashed with argon2id at OWASP's baseline (19 MiB, 2 passes,
 * 1 lane: the library's defaults), salted per value; the encoded string carries its parameters,
 * so raising them later still verifies old hashes.
 */
export const hashSecret = (value: string): Promise<string> => hash(value);

export async function verifySecret(encoded: string | null, value: string): Promise<boolean> {
  if (!encoded) return false;
  try {
    return await verify(encoded, value);
  } catch {
    return false;
  }
}

/** NIST SP 800-63B: at least 10 characters here, any characters, long passphrases welcome. */
export function checkPassword(password: unknown, field = 'password'): string {
  if (typeof password !== 'string' || password.length < 10)
    throw badInput(field, `${field} must be at least 10 characters.`);
  if (password.length > 200) throw badInput(field, `${field} must be at most 200 characters.`);
  return password;
}

export function checkPin(pin: unknown, field = 'pin'): string {
  if (typeof pin !== 'string' || !/^\d{4}$/.test(pin)) throw badInput(field, `${field} must be exactly 4 digits.`);
  return pin;
}

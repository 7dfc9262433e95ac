import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/domain/webhooks/secret-box.js';

describe('sealed webhook secrets', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips, with a fresh IV each time', () => {
    const a = box.seal('whsec_abc', 'webhook-secret:e1:u1');
    const b = box.seal('whsec_abc', 'webhook-secret:e1:u1');
    expect(a).not.toBe(b);
    expect(box.open(a, 'webhook-secret:e1:u1')).toBe('whsec_abc');
  });

  it('refuses a tampered ciphertext, a ciphertext moved to another endpoint or user, and another key', () => {
    const sealed = box.seal('whsec_abc', 'webhook-secret:e1:u1');
    const [version, iv, tag, ciphertext] = sealed.split('.');
    const flipped = Buffer.from(ciphertext!, 'base64url');
    flipped[0]! ^= 1;
    expect(() =>
      box.open([version, iv, tag, flipped.toString('base64url')].join('.'), 'webhook-secret:e1:u1'),
    ).toThrow();
    expect(() => box.open(sealed, 'webhook-secret:e2:u1')).toThrow();
    expect(() => box.open(sealed, 'webhook-secret:e1:u2')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'webhook-secret:e1:u1')).toThrow();
    expect(() => box.open('v2.x.y.z', 'webhook-secret:e1:u1')).toThrow(/Unrecognised/);
  });
});

import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { INBOUND_MAX_AGE_MS, readEnvelope } from '../../src/domain/facade/inbound-envelope.js';
import { localOwnerId } from '../../src/domain/facade/inbound-owners.js';
import { signatureMatches } from '../../src/domain/facade/inbound-webhooks.js';
import { isUuid } from '../../src/domain/ids.js';

describe('the local id of an upstream user', () => {
  it('is the upstream id itself when it is a UUID, and otherwise a UUID made from it, always the same', () => {
    expect(localOwnerId('0F02645A-C00E-418F-A18E-5A4773A7FB35')).toBe('0f02645a-c00e-418f-a18e-5a4773a7fb35');
    const made = localOwnerId('user_42');
    expect(isUuid(made)).toBe(true);
    expect(made[14]).toBe('5');
    expect(localOwnerId('user_42')).toBe(made);
    expect(localOwnerId('user_43')).not.toBe(made);
  });
});

describe('an inbound signature', () => {
  const body = Buffer.from('{"id":"evt_1","type":"deposit.completed","created":1,"data":{}}');
  const good = createHmac('sha256', 'whsec_a').update(body).digest('hex');

  it('matches only the hex HMAC-SHA-256 of the exact bytes under the secret, in either case', () => {
    expect(signatureMatches(body, good, 'whsec_a')).toBe(true);
    expect(signatureMatches(body, good.toUpperCase(), 'whsec_a')).toBe(true);
    expect(signatureMatches(body, good, 'whsec_b')).toBe(false);
    expect(signatureMatches(Buffer.concat([body, Buffer.from(' ')]), good, 'whsec_a')).toBe(false);
    expect(signatureMatches(body, good.slice(2), 'whsec_a')).toBe(false);
    expect(signatureMatches(body, `sha256=${good}`, 'whsec_a')).toBe(false);
    expect(signatureMatches(body, undefined, 'whsec_a')).toBe(false);
  });
});

describe('an inbound envelope', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const envelope = (created: number) =>
    Buffer.from(JSON.stringify({ id: 'evt_1', type: 'bill.payment.successful', created, data: { reference: 'B1' } }));

  it('keeps the upstream’s created, takes one ahead of the clock as now, and refuses one older than the ids kept', () => {
    const seconds = now.getTime() / 1000;
    expect(readEnvelope(envelope(seconds - 60), now).created).toEqual(new Date(now.getTime() - 60_000));
    expect(readEnvelope(envelope(seconds + 3_600), now).created).toEqual(now);
    const oldest = seconds - INBOUND_MAX_AGE_MS / 1000;
    expect(readEnvelope(envelope(oldest), now).created).toEqual(new Date(oldest * 1000));
    expect(() => readEnvelope(envelope(oldest - 1), now)).toThrow(/older than the 7 days/);
  });
});

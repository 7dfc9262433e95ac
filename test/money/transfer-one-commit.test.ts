import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { watchDriver } from '../helpers/driver-watch.js';
import { fund } from '../helpers/wallet.js';
import { principalOf } from '../helpers/principal.js';

describe('a P2P transfer commits once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('sends one writing statement and opens no transaction of its own, replays included', async () => {
    const alice = await seedTenant(t.services);
    const bob = await seedTenant(t.services);
    await fund(t, alice, 100);
    // The first transfer between two wallets resolves their account ids; later ones know them.
    await t.services.wallet.transfer(principalOf(alice.user.id), { amount: 1, recipient: bob.user.id }, undefined);
    const watch = watchDriver(t);
    try {
      const sent = await t.services.wallet.transfer(
        principalOf(alice.user.id),
        { amount: 2, recipient: bob.user.id },
        'one-commit',
      );
      const replayed = await t.services.wallet.transfer(
        principalOf(alice.user.id),
        { amount: 2, recipient: bob.user.id },
        'one-commit',
      );
      expect(replayed).toEqual(sent);
    } finally {
      watch.stop();
    }
    const writes = watch.seen.statements.filter((text) => /\b(insert|update|delete)\b/i.test(text));
    // Per request: the recipient's lookup (a read) and the transfer statement (the one write).
    expect(writes).toHaveLength(2);
    expect(watch.seen.statements.length).toBeLessThanOrEqual(4);
    expect(watch.seen.transactions).toBe(0);
    expect(await t.services.wallet.balance(principalOf(bob.user.id))).toMatchObject({ available: 300n });
  });

  it('answers 409 for a key another process holds, and claims afresh one whose holder died', async () => {
    const alice = await seedTenant(t.services);
    const bob = await seedTenant(t.services);
    await fund(t, alice, 100);
    const input = { amount: 3, recipient: bob.user.id };
    // The fingerprint of that request, as the service computes it (kobo, no reference, no narration).
    const fingerprint = t.services.idempotency.fingerprint({
      amount: 300n,
      reference: null,
      recipient: bob.user.id,
      narration: null,
    });
    const hold = (key: string, until: Date) =>
      t.services.db.execute(
        sql`insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, locked_until)
            values (${alice.user.id}, 'sandbox', 'wallet.transfer', ${key}, ${fingerprint},
              'running', ${until.toISOString()}::timestamptz)`,
      );
    await hold('live', new Date(Date.now() + 60_000));
    await expect(t.services.wallet.transfer(principalOf(alice.user.id), input, 'live')).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await hold('lapsed', new Date(Date.now() - 1_000));
    const sent = await t.services.wallet.transfer(principalOf(alice.user.id), input, 'lapsed');
    expect(await t.services.wallet.transfer(principalOf(alice.user.id), input, 'lapsed')).toEqual(sent);
    expect(await t.services.wallet.balance(principalOf(bob.user.id))).toMatchObject({ available: 300n });
  });
});

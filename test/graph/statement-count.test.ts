import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';
import { HOME_SCREEN } from '../../src/graphql/home-screen.js';
import { countStatements, principalOf, seedEveryKind } from './seed.js';

/**
 * Depth, not item count, sets the cost of a query: every relationship goes through a per-request
 * loader (one statement per kind of lookup), so the home screen runs as many statements over 100
 * transactions as over one.
 */
describe('SQL statements of the home screen', () => {
  let t: TestApp;
  let recipient: Tenant;
  beforeAll(async () => {
    ({ t, tenant: recipient } = await startTestApp({
      config: { RATE_LIMIT_PER_MINUTE: 100_000, API_KEY_CACHE_MS: 0 },
    }));
  });
  afterAll(() => t.close());

  const transfers = async (tenant: Tenant, count: number, tag: string) => {
    for (let i = 0; i < count; i += 1)
      await t.services.wallet.transfer(
        principalOf(tenant),
        { amount: 1, recipient: recipient.user.email, reference: `${tag}-${i}` },
        undefined,
      );
  };

  /** The statements of one home-screen request, after a first one warmed the chain state. */
  const statementsOf = async (tenant: Tenant, items: number) => {
    const run = async () => {
      const { body } = await graphql(t.app, tenant.keys.READ_ONLY, HOME_SCREEN, { transactions: 100 });
      expect(body.errors).toBeUndefined();
      expect(body.data!.me.transactions.nodes).toHaveLength(items);
      return body.data!;
    };
    await run();
    // Caches that live a second would make the count depend on how long the run took.
    t.services.users.forget(tenant.user.id);
    return (await countStatements(t.services, run)).statements;
  };

  it('is the same over 1 and over 100 transactions', async () => {
    const one = await seedTenant(t.services);
    const hundred = await seedTenant(t.services);
    await fund(t, one, 100);
    await fund(t, hundred, 1000);
    await transfers(hundred, 99, 'many');
    // A deposit each, then transfers: the same kinds of record, in different numbers.
    const overOne = await statementsOf(one, 1);
    const overHundred = await statementsOf(hundred, 100);
    expect(overHundred).toBe(overOne);
    expect(overOne).toBeLessThan(25);
  });

  it('is the same over every kind of record, one each and a hundred in all', async () => {
    const tenant = await seedTenant(t.services);
    await seedEveryKind(t, tenant, recipient, 'count');
    const overSix = await statementsOf(tenant, 6);
    await transfers(tenant, 94, 'more');
    const overHundred = await statementsOf(tenant, 100);
    expect(overHundred).toBe(overSix);
  });
});

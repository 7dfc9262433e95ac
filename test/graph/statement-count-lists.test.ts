import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';
import { countStatements, seedEveryKind } from './seed.js';

/**
 * Every list-of-objects field of the connected graph, each with the relationships its items have:
 * the SQL statements a query runs depend on its depth, not on how many items its list holds (one
 * item against a hundred, or against several parents' worth for nested lists).
 */
/** Each list-of-objects field of `User`, with the relationships its items have. */
const LISTS: Record<string, string> = {
  transactions: `transactions(first: $n) { nodes { id record { __typename }
    walletTransaction { id transaction { id } record { __typename } } } }`,
  walletTransactions: 'walletTransactions(first: $n) { nodes { id transaction { id kind } record { __typename } } }',
  deposits: 'deposits(first: $n) { nodes { id transaction { id } paymentMethod { id } } }',
  payouts: 'payouts(first: $n) { nodes { id transaction { id } } }',
  billRecords: 'billRecords(first: $n) { nodes { id transaction { id record { __typename } } } }',
  businessCustomers: 'businesses { id customers(first: $n) { nodes { id business { id name } } } }',
};
const listQuery = (field: string) => `query List($n: Int = 100) { me { ${LISTS[field]} } }`;

/** How many items the answer's lists hold, nested ones included. */
const itemsIn = (value: unknown): number => {
  if (Array.isArray(value)) return value.length + value.reduce((sum: number, v) => sum + itemsIn(v), 0);
  if (value && typeof value === 'object') return Object.values(value).reduce((sum: number, v) => sum + itemsIn(v), 0);
  return 0;
};
const BY_NODE_ID = /* GraphQL */ `
  query ByNodeId($ids: [ID!]!) {
    nodes(ids: $ids) {
      ... on BillRecord { id transaction { id } }
      ... on Deposit { id transaction { id } }
      ... on Payout { id transaction { id } }
    }
  }
`;
const NODE_IDS = `query Ids { me { deposits(first: 100) { nodes { nodeId } } payouts(first: 100) { nodes { nodeId } }
  billRecords(first: 100) { nodes { nodeId } } } }`;

describe('SQL statements of every list field', () => {
  let t: TestApp;
  let recipient: Tenant;
  beforeAll(async () => {
    ({ t, tenant: recipient } = await startTestApp({
      config: { RATE_LIMIT_PER_MINUTE: 100_000, API_KEY_CACHE_MS: 0 },
    }));
    await seedBoth();
  });
  afterAll(() => t.close());

  const businessesWith = async (tenant: Tenant, businesses: number, customers: number) => {
    for (let b = 0; b < businesses; b++)
      await t.services.db.execute(sql`
        with business as (
          insert into businesses (owner_user_id, name) values (${tenant.user.id}, ${`Shop ${b}`}) returning id
        )
        insert into business_customers (business_id, environment, name)
        select business.id, 'sandbox', 'Customer ' || g from business, generate_series(1, ${customers}) g`);
  };

  /** The statements of one request, after a first one warmed the chain state. */
  const statementsOf = async (tenant: Tenant, query: string, variables: Record<string, unknown>) => {
    const run = async () => {
      const { body } = await graphql(t.app, tenant.keys.READ_ONLY, query, variables);
      expect(body.errors).toBeUndefined();
      return body.data!;
    };
    await run();
    // Caches that live a second would make the count depend on how long the run took.
    t.services.users.forget(tenant.user.id);
    return countStatements(t.services, run);
  };

  let one: Tenant;
  let many: Tenant;
  /** `one`: one item of every kind and one business customer; `many`: a hundred in each list that grows. */
  async function seedBoth() {
    one = await seedTenant(t.services);
    await seedEveryKind(t, one, recipient, 'one');
    await businessesWith(one, 1, 1);

    many = await seedTenant(t.services);
    await seedEveryKind(t, many, recipient, 'many');
    await fund(t, many, 100_000);
    const transact = rest(t, many.keys.TRANSACTIONS);
    for (let i = 0; i < 99; i++) {
      await fund(t, many, 10);
      const bill = await transact('POST', '/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'mtn',
        amount: 100,
        reference: `AIR-many-${i}`,
      });
      expect(bill.statusCode).toBe(201);
      const payout = await transact('POST', '/api/v1/wallet/withdraw', {
        amount: 100,
        bankCode: '044',
        accountNumber: '0690000040',
        reference: `PO-many-${i}`,
      });
      expect(payout.statusCode).toBe(201);
    }
    await businessesWith(many, 3, 40);
  }

  for (const field of Object.keys(LISTS))
    it(`${field}: the same over one item as over a hundred`, async () => {
      const overOne = await statementsOf(one, listQuery(field), {});
      const overMany = await statementsOf(many, listQuery(field), {});
      expect(itemsIn(overOne.result)).toBeLessThanOrEqual(12);
      expect(itemsIn(overMany.result)).toBeGreaterThanOrEqual(100);
      // The feed of every kind: `one` holds one item of each of the six kinds, `many`'s newest hundred
      // only three kinds; lookups go per kind, so a hundred items must cost no more than one of each.
      if (field === 'transactions') expect(overMany.statements).toBeLessThanOrEqual(overOne.statements);
      else expect(overMany.statements).toBe(overOne.statements);
    });

  it('nodes(ids): a hundred ids of three kinds cost as many statements as three ids, one of each', async () => {
    const idsOf = async (tenant: Tenant) => {
      const { body } = await graphql(t.app, tenant.keys.READ_ONLY, NODE_IDS);
      const me = body.data!.me;
      return [me.billRecords, me.deposits, me.payouts].map((list) =>
        list.nodes.map((n: { nodeId: string }) => n.nodeId),
      );
    };
    const few = (await idsOf(one)).map((ids) => ids[0]);
    const [bills, deposits, payouts] = await idsOf(many);
    const hundred = [...bills!.slice(0, 34), ...deposits!.slice(0, 33), ...payouts!.slice(0, 33)];
    expect(hundred).toHaveLength(100);
    const overFew = await statementsOf(one, BY_NODE_ID, { ids: few });
    const overHundred = await statementsOf(many, BY_NODE_ID, { ids: hundred });
    expect(overHundred.result.nodes.filter(Boolean)).toHaveLength(100);
    expect(overHundred.statements).toBe(overFew.statements);
  });
});

import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter } from '../helpers/federation.js';
import { graphql, seedTenant, type StartedTestApp, startTestApp, type Tenant } from '../helpers/app.js';
import { seedEveryKind } from './seed.js';

/** Entity types of the gateway graph other subgraphs can extend or point at. */
const ENTITIES = [
  'Transaction',
  'BillRecord',
  'Deposit',
  'Payout',
  'OfframpOrder',
  'Business',
  'BusinessCustomer',
  'User',
];

/**
 * A second subgraph, as a partner's receipts service would be: it extends Transaction with a field
 * of its own, and keeps references to the gateway's entities, which the gateway resolves.
 */
const receiptsTypeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Transaction @key(fields: "id") {
    id: ID!
    receiptUrl: String!
  }
  ${ENTITIES.filter((e) => e !== 'Transaction')
    .map((e) => `type ${e} @key(fields: "id", resolvable: false) { id: ID! }`)
    .join('\n')}
  type Pinned {
    ${ENTITIES.map((e) => `${e[0]!.toLowerCase()}${e.slice(1)}: ${e}`).join('\n')}
  }
  type Query {
    "A reference to each entity type, all with the same id."
    pinned(id: ID!): Pinned!
  }
`);

describe('federation: the gateway graph as a subgraph beside another that extends Transaction', () => {
  let s: StartedTestApp;
  let other: Tenant;
  let receipts: ApolloServer;
  let gateway: ApolloServer<{ key: string }>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    s = await startTestApp({ listen: true });
    other = await seedTenant(s.t.services);
    await seedEveryKind(s.t, s.tenant, other, 'fed');
    const business = await s.t.services.users.createBusiness(s.tenant.user.id, 'Fed Foods');
    const customer = await graphql(
      s.t.app,
      s.tenant.keys.ACCOUNT_MANAGEMENT,
      `mutation { createBusinessCustomer(businessId: "${business.id}", input: { name: "Tolu" }) { id } }`,
    );
    const { body } = await graphql(
      s.t.app,
      s.tenant.keys.READ_ONLY,
      `{ me { id transactions(first: 1) { nodes { id } } billRecords(first: 1) { nodes { id } } deposits(first: 1) { nodes { id } }
        payouts(first: 1) { nodes { id } } offrampOrders(first: 1) { nodes { id } } } }`,
    );
    const me = body.data!.me;
    Object.assign(ids, {
      User: me.id,
      Transaction: me.transactions.nodes[0].id,
      BillRecord: me.billRecords.nodes[0].id,
      Deposit: me.deposits.nodes[0].id,
      Payout: me.payouts.nodes[0].id,
      OfframpOrder: me.offrampOrders.nodes[0].id,
      Business: business.id,
      BusinessCustomer: customer.body.data!.createBusinessCustomer.id,
    });

    receipts = new ApolloServer({
      schema: buildSubgraphSchema({
        typeDefs: receiptsTypeDefs,
        resolvers: {
          Query: {
            pinned: (_root: unknown, { id }: { id: string }) =>
              Object.fromEntries(ENTITIES.map((e) => [`${e[0]!.toLowerCase()}${e.slice(1)}`, { id }])),
          },
          Transaction: {
            __resolveReference: (reference: { id: string }) => ({ id: reference.id }),
            receiptUrl: (transaction: { id: string }) => `https://receipts.example/${transaction.id}`,
          },
        } as never,
      }),
    });
    const { url: receiptsUrl } = await startStandaloneServer(receipts, { listen: { port: 0, host: '127.0.0.1' } });
    // The gateway's subgraph SDL, as a router fetches it.
    const service = await graphql(s.t.app, s.tenant.keys.READ_ONLY, '{ _service { sdl } }');
    gateway = await startRouter([
      { name: 'gateway', typeDefs: parse(service.body.data!._service.sdl), url: `${s.baseUrl}/graphql` },
      { name: 'receipts', typeDefs: receiptsTypeDefs, url: receiptsUrl },
    ]);
  });
  afterAll(async () => {
    await gateway?.stop();
    await receipts?.stop();
    await s.t.close();
  });

  const run = async (key: string, query: string, variables?: Record<string, unknown>) => {
    const response = await gateway.executeOperation({ query, variables }, { contextValue: { key } });
    if (response.body.kind !== 'single') throw new Error('expected a single result');
    return response.body.singleResult;
  };

  it('adds the second subgraph’s field to the gateway’s transactions', async () => {
    const result = await run(
      s.tenant.keys.READ_ONLY,
      '{ me { transactions(first: 6) { nodes { id kind receiptUrl } } } }',
    );
    expect(result.errors).toBeUndefined();
    const nodes = (result.data as { me: { transactions: { nodes: Array<{ id: string; receiptUrl: string }> } } }).me
      .transactions.nodes;
    expect(nodes).toHaveLength(6);
    for (const node of nodes) expect(node.receiptUrl).toBe(`https://receipts.example/${node.id}`);
  });

  const FIELDS: Record<string, string> = {
    Transaction: 'kind status reference',
    BillRecord: 'reference billerName',
    Deposit: 'reference method',
    Payout: 'reference bankName',
    OfframpOrder: 'reference token',
    Business: 'name',
    BusinessCustomer: 'name',
    User: 'email',
  };

  it.each(ENTITIES)(
    'resolves %s references for its owner only (another tenant and environment see null)',
    async (entity) => {
      const field = `${entity[0]!.toLowerCase()}${entity.slice(1)}`;
      const query = `query ($id: ID!) { pinned(id: $id) { ${field} { id ${FIELDS[entity]} } } }`;
      const mine = await run(s.tenant.keys.READ_ONLY, query, { id: ids[entity] });
      expect(mine.errors).toBeUndefined();
      const found = (mine.data as { pinned: Record<string, Record<string, unknown> | null> }).pinned[field];
      expect(found).toMatchObject({ id: ids[entity] });
      for (const value of FIELDS[entity]!.split(' ')) expect(found![value]).toBeTruthy();
      const theirs = await run(other.keys.READ_ONLY, query, { id: ids[entity] });
      expect(theirs.errors).toBeUndefined();
      expect((theirs.data as { pinned: Record<string, unknown> }).pinned[field]).toBeNull();
      if (entity !== 'User' && entity !== 'Business') {
        // Users and businesses are the same in both environments; records are not.
        const production = await run(s.tenant.productionKey, query, { id: ids[entity] });
        expect((production.data as { pinned: Record<string, unknown> }).pinned[field]).toBeNull();
      }
    },
  );
});

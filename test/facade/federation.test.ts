import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter } from '../helpers/federation.js';
import { createTestApp, type StartedTestApp, startTestApp, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';

/**
 * A second subgraph, as a partner's receipts service would be: a root field of its own. The facade's
 * graph has no entities (it cannot resolve a reference another subgraph hands it), so composing
 * means its root fields and the other's answer one operation together.
 */
const receiptsTypeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Receipt {
    reference: String!
    url: String!
  }
  type Query {
    "The receipt page of a bill payment, by its reference."
    receipt(reference: String!): Receipt!
  }
`);

/** This gateway in service mode as the upstream, a facade in front of it, composed by @apollo/gateway. */
describe('federation: the facade graph as a subgraph beside another', () => {
  let service: StartedTestApp;
  let facade: TestApp;
  let receipts: ApolloServer;
  let gateway: ApolloServer<{ key: string }>;

  beforeAll(async () => {
    service = await startTestApp({ listen: true });
    facade = await createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: service.baseUrl } });
    await facade.app.listen({ port: 0, host: '127.0.0.1' });
    const facadeUrl = `http://127.0.0.1:${(facade.app.server.address() as { port: number }).port}/graphql`;
    await fund(service.t, service.tenant, 5_000);
    const paid = await service.t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': service.tenant.keys.FULL_ACCESS },
      payload: JSON.stringify({
        query:
          'mutation { buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 150 }) { reference } }',
      }),
    });
    expect(paid.json().errors).toBeUndefined();

    receipts = new ApolloServer({
      schema: buildSubgraphSchema({
        typeDefs: receiptsTypeDefs,
        resolvers: {
          Query: {
            receipt: (_root: unknown, { reference }: { reference: string }) => ({
              reference,
              url: `https://receipts.example/${reference}`,
            }),
          },
        } as never,
      }),
    });
    const { url: receiptsUrl } = await startStandaloneServer(receipts, { listen: { port: 0, host: '127.0.0.1' } });
    // The facade's subgraph SDL, as a router fetches it.
    const sdl = await facade.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': service.tenant.keys.READ_ONLY },
      payload: JSON.stringify({ query: '{ _service { sdl } }' }),
    });
    gateway = await startRouter([
      { name: 'facade', typeDefs: parse(sdl.json().data._service.sdl), url: facadeUrl },
      { name: 'receipts', typeDefs: receiptsTypeDefs, url: receiptsUrl },
    ]);
  });
  afterAll(async () => {
    await gateway?.stop();
    await receipts?.stop();
    await facade?.close();
    await service?.t.close();
  });

  it('answers one operation from the facade (over its upstream) and the other subgraph', async () => {
    const response = await gateway.executeOperation(
      {
        query: `{ me { email } billRecords(limit: 1) { total bills { reference amount } }
                  receipt(reference: "R-1") { url } }`,
      },
      { contextValue: { key: service.tenant.keys.READ_ONLY } },
    );
    if (response.body.kind !== 'single') throw new Error('expected a single result');
    const { data, errors } = response.body.singleResult;
    expect(errors).toBeUndefined();
    const direct = await service.t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': service.tenant.keys.READ_ONLY },
      payload: JSON.stringify({ query: '{ me { email } billRecords(limit: 1) { total bills { reference amount } } }' }),
    });
    // The facade's part is what GraphQL on the upstream answers; the other subgraph's is its own.
    expect({ me: data!.me, billRecords: data!.billRecords }).toEqual(direct.json().data);
    expect(data!.receipt).toEqual({ url: 'https://receipts.example/R-1' });
    expect((data!.billRecords as { total: number }).total).toBe(1);
  });
});

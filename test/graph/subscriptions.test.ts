import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';
import { seedEveryKind } from './seed.js';

type Seen = Record<string, Array<Record<string, unknown>>>;

describe('subscriptions select the changed object with its relationships', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ listen: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  it('a transaction event leads to its record, a bill event to its transaction, an order event to its order', async () => {
    const tenant = await seedTenant(s.t.services);
    const other = await seedTenant(s.t.services);
    const client = createClient({
      url: s.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    const documents: Record<string, string> = {
      transactionUpdates: `transactionUpdates(after: 0) { type reference transaction { kind walletTransaction { reference }
        record { __typename ... on Deposit { method } ... on BillRecord { billerName } ... on Payout { bankName } ... on WalletTransaction { type } } } }`,
      depositUpdates:
        'depositUpdates(after: 0) { reference deposit { reference method transaction { kind } } payout { id } }',
      payoutUpdates: 'payoutUpdates(after: 0) { reference payout { reference transaction { kind } } }',
      billUpdates: 'billUpdates(after: 0) { reference record { reference customer transaction { kind reference } } }',
      offrampOrderUpdates: 'offrampOrderUpdates(after: 0) { reference order { reference token transaction { kind } } }',
    };
    const seen: Seen = Object.fromEntries(Object.keys(documents).map((k) => [k, []]));
    const errors: unknown[] = [];
    for (const [field, selection] of Object.entries(documents))
      client.subscribe<Record<string, Record<string, unknown>>>(
        { query: `subscription { ${selection} }` },
        {
          next: (m) => (m.errors ? errors.push(m.errors) : seen[field]!.push(m.data![field]!)),
          error: (e) => errors.push(e),
          complete: () => undefined,
        },
      );
    try {
      await seedEveryKind(s.t, tenant, other, 'sub');
      await waitUntil(async () => {
        await stampCommittedEvents(s.t.services.db, { wait: true });
        s.t.services.eventFeed.wake();
        return (
          seen['transactionUpdates']!.length >= 7 &&
          seen['billUpdates']!.length >= 1 &&
          seen['offrampOrderUpdates']!.length >= 1 &&
          seen['payoutUpdates']!.length >= 1 &&
          seen['depositUpdates']!.length >= 1
        );
      }, 15_000);
      expect(errors).toEqual([]);
      const byReference = Object.fromEntries(
        seen['transactionUpdates']!.map((u) => [u['reference'], u['transaction'] as Record<string, unknown>]),
      );
      expect(byReference['AIR-sub']).toMatchObject({
        kind: 'BILL',
        walletTransaction: { reference: 'AIR-sub' },
        record: { __typename: 'BillRecord', billerName: expect.any(String) },
      });
      expect(byReference['PO-sub']).toMatchObject({ kind: 'PAYOUT', record: { __typename: 'Payout' } });
      expect(byReference['TR-sub']).toMatchObject({
        kind: 'TRANSFER_OUT',
        record: { __typename: 'WalletTransaction', type: 'TRANSFER_OUT' },
      });
      expect(seen['depositUpdates']![0]).toMatchObject({
        deposit: { method: 'virtual_account', transaction: { kind: 'DEPOSIT' } },
        payout: null,
      });
      expect(seen['payoutUpdates']![0]).toMatchObject({
        payout: { reference: 'PO-sub', transaction: { kind: 'PAYOUT' } },
      });
      expect(seen['billUpdates']![0]).toMatchObject({
        reference: 'AIR-sub',
        record: { reference: 'AIR-sub', customer: '08031234567', transaction: { kind: 'BILL', reference: 'AIR-sub' } },
      });
      expect(seen['offrampOrderUpdates']![0]).toMatchObject({
        reference: 'OFF-sub',
        order: { reference: 'OFF-sub', token: 'USDC', transaction: { kind: 'OFFRAMP' } },
      });
    } finally {
      await client.dispose();
    }
  });
});

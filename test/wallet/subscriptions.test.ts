import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

describe('wallet subscriptions', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ listen: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  it('streams typed deposit, payout and transaction updates of the caller only', async () => {
    const tenant = await seedTenant(s.t.services);
    const stranger = await seedTenant(s.t.services);
    const client = createClient({
      url: s.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    const seen: Record<string, Array<{ type: string; status: string; reference: string; amount: number }>> = {
      depositUpdates: [],
      payoutUpdates: [],
      transactionUpdates: [],
    };
    for (const field of Object.keys(seen)) {
      client.subscribe<Record<string, { type: string; status: string; reference: string; amount: number }>>(
        { query: `subscription { ${field}(after: 0) { eventId type seq reference status amount data } }` },
        { next: (m) => seen[field]!.push(m.data![field]!), error: (e) => console.error(e), complete: () => undefined },
      );
    }
    // No wait for the subscriptions to be live: `after: 0` replays what happened before they were.
    try {
      await fund(s.t, stranger, 10);
      await fund(s.t, tenant, 500);
      await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/withdraw', {
        amount: 100,
        bankCode: '044',
        accountNumber: '0690000040',
        reference: 'SUB-PO',
      });
      await waitUntil(async () => {
        await stampCommittedEvents(s.t.services.db, { wait: true });
        s.t.services.eventFeed.wake();
        return (
          seen['payoutUpdates']!.length >= 2 &&
          seen['transactionUpdates']!.length >= 4 &&
          seen['depositUpdates']!.length >= 1
        );
      }, 10_000);
      // Money into the permanent account has already arrived: its deposit is born completed.
      expect(seen['depositUpdates']!.map((u) => [u.type, u.status, u.amount])).toEqual([
        ['deposit.completed', 'COMPLETED', 500],
      ]);
      expect(seen['payoutUpdates']!.map((u) => [u.type, u.status, u.reference])).toEqual([
        ['payout.initiated', 'initiated', 'SUB-PO'],
        ['payout.completed', 'completed', 'SUB-PO'],
      ]);
      expect(seen['transactionUpdates']!.map((u) => u.type)).toEqual([
        'transaction.created',
        'transaction.completed',
        'transaction.created',
        'transaction.completed',
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('streams bill outcomes, narrowed to one reference when asked', async () => {
    const tenant = await seedTenant(s.t.services);
    await fund(s.t, tenant, 1000);
    const client = createClient({
      url: s.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': tenant.keys.READ_ONLY },
      retryAttempts: 0,
    });
    const all: Array<{ reference: string; status: string }> = [];
    const one: Array<{ reference: string; status: string }> = [];
    client.subscribe<{ billUpdates: { reference: string; status: string } }>(
      {
        query:
          'subscription { billUpdates(after: 0) { eventId type seq reference status amount billerName customerName customerId } }',
      },
      { next: (m) => all.push(m.data!.billUpdates), error: () => undefined, complete: () => undefined },
    );
    client.subscribe<{ billUpdates: { reference: string; status: string } }>(
      { query: 'subscription { billUpdates(reference: "SUB-B2", after: 0) { reference status } }' },
      { next: (m) => one.push(m.data!.billUpdates), error: () => undefined, complete: () => undefined },
    );
    try {
      for (const reference of ['SUB-B1', 'SUB-B2']) {
        await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/bills/buy-airtime', {
          phoneNumber: '08031234567',
          biller: 'MTN',
          amount: 100,
          reference,
        });
      }
      await waitUntil(async () => {
        await stampCommittedEvents(s.t.services.db, { wait: true });
        s.t.services.eventFeed.wake();
        return all.length >= 2 && one.length >= 1;
      }, 10_000);
      expect(all.map((u) => [u.reference, u.status])).toEqual([
        ['SUB-B1', 'SUCCESS'],
        ['SUB-B2', 'SUCCESS'],
      ]);
      expect(one).toEqual([{ reference: 'SUB-B2', status: 'SUCCESS' }]);
    } finally {
      await client.dispose();
    }
  });
});

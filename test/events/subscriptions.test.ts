import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventStore, recordEvent } from '../../src/domain/events/outbox.js';
import { latestEventSeq } from '../../src/domain/events/relay.js';
import { stampEvents } from '../helpers/events.js';
import { seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { waitUntil as until } from '../helpers/wait.js';

interface Received {
  id: string;
  seq: number;
  type: string;
  data: { n: number };
}

describe('events subscription (graphql-ws)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let url: string;
  beforeAll(async () => ({ t, tenant, wsUrl: url } = await startTestApp({ listen: true })));
  afterAll(() => t.close());

  let counter = 0;
  /** Records events, stamps them and rings the doorbell, as the relay would. */
  async function emit(owner: Tenant, count: number, type = 'deposit.completed') {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        (
          await recordEvent(
            t.services.db,
            { type, userId: owner.user.id, environment: 'sandbox', data: { n: ++counter } },
            new Date(),
          )
        ).id,
      );
    }
    await stampEvents(t.services.db, ids);
    t.services.doorbell.ring();
  }

  function listen(client: Client, query: string) {
    const received: Received[] = [];
    let failure: unknown;
    const stop = client.subscribe<{ events: Received }>(
      { query },
      {
        // A refused subscription arrives as one result carrying errors, then completes.
        next: (message) =>
          message.errors ? (failure = message.errors) : message.data && received.push(message.data.events),
        error: (e) => (failure = e),
        complete: () => undefined,
      },
    );
    return { received, stop, failure: () => failure };
  }

  const client = (key: string) =>
    createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': key },
      retryAttempts: 0,
      lazy: true,
    });

  it('streams live events; after a disconnect, `after` replays exactly the missed ones in order, then goes live', async () => {
    const first = client(tenant.keys.READ_ONLY);
    const live = listen(first, 'subscription { events(types: ["deposit.completed"]) { id seq type data } }');
    // "From now" is fixed once the subscription has read the current position, which the client
    // cannot see: it is live once an event sent after subscribing arrives. Earlier ones are ignored.
    await until(async () => {
      await emit(tenant, 1);
      return live.received.length > 0;
    });
    // Live before the first probe that arrived, so every later probe arrives too.
    const lastProbe = counter;
    await until(() => live.received.some((e) => e.data.n === lastProbe));
    const before = live.received.length;
    await emit(tenant, 2);
    await emit(tenant, 1, 'payout.failed'); // filtered out by types: had it passed, it would come before the next
    await emit(tenant, 1);
    await until(() => live.received.some((e) => e.data.n === counter));
    expect(live.received.slice(before).map((e) => e.data.n)).toEqual([counter - 3, counter - 2, counter]);
    const lastSeen = live.received.at(-1)!.seq;
    await first.dispose();
    await until(() => t.services.eventFeed.subscriberCount === 0);

    await emit(tenant, 4); // missed while disconnected
    const missed = counter;

    // Events keep arriving while the replay runs: inject some between its first read and going live.
    const originalList = eventStore.listEventsAfter;
    let injected = false;
    eventStore.listEventsAfter = async (...args) => {
      const page = await originalList.apply(eventStore, args);
      if (!injected) {
        injected = true;
        await emit(tenant, 2);
      }
      return page;
    };
    const second = client(tenant.keys.READ_ONLY);
    const resumed = listen(
      second,
      `subscription { events(types: ["deposit.completed"], after: ${lastSeen}) { id seq type data } }`,
    );
    try {
      await until(() => resumed.received.length >= 6);
      await emit(tenant, 1);
      // Events reach a subscriber in `seq` order, so once the last one sent has arrived, a
      // duplicate or a stray event would already be in the list.
      await until(() => resumed.received.some((e) => e.data.n === counter));
    } finally {
      eventStore.listEventsAfter = originalList;
      await second.dispose();
    }
    await until(() => t.services.eventFeed.subscriberCount === 0);
    const numbers = resumed.received.map((e) => e.data.n);
    expect(numbers).toEqual([missed - 3, missed - 2, missed - 1, missed, missed + 1, missed + 2, missed + 3]);
    const seqs = resumed.received.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs[0]).toBeGreaterThan(lastSeen);
  });

  it("streams only the caller's own events of its own environment", async () => {
    const other = await seedTenant(t.services);
    const mine = client(tenant.keys.READ_ONLY);
    const after = await latestEventSeq(t.services.db);
    // Counted from before subscribing, so a subscriber an earlier test left behind does not count.
    const subscribersBefore = t.services.eventFeed.subscriberCount;
    const stream = listen(mine, `subscription { events(after: ${after}) { data } }`);
    await until(() => t.services.eventFeed.subscriberCount > subscribersBefore);
    await emit(other, 2);
    await recordEvent(
      t.services.db,
      { type: 'deposit.completed', userId: tenant.user.id, environment: 'production', data: { n: -1 } },
      new Date(),
    );
    await emit(tenant, 1);
    // The caller's event was stamped after the others (commit order), and the feed delivers in
    // `seq` order: had another tenant's or environment's event leaked, it would have come first.
    await until(() => stream.received.some((e) => e.data.n === counter));
    expect(stream.received.map((e) => e.data.n)).toEqual([counter]);
    await mine.dispose();
  });

  it('refuses a subscription without a key, and closes a connection whose key is revoked', async () => {
    const anonymous = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });
    const refused = listen(anonymous, 'subscription { events { id } }');
    await until(() => refused.failure() !== undefined);
    expect(JSON.stringify(refused.failure())).toMatch(/Authentication required/);
    await anonymous.dispose();

    const { key, apiKey } = await t.services.apiKeys.create({
      userId: tenant.user.id,
      name: 'ws',
      environment: 'sandbox',
    });
    let closedWith: number | undefined;
    const revocable = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: { apiKey: key },
      retryAttempts: 0,
      on: { closed: (event) => (closedWith = (event as { code: number }).code) },
    });
    const after = await latestEventSeq(t.services.db);
    const subscribersBefore = t.services.eventFeed.subscriberCount;
    const stream = listen(revocable, `subscription { events(after: ${after}) { id } }`);
    await until(() => t.services.eventFeed.subscriberCount > subscribersBefore); // connected with the key
    await t.services.apiKeys.revoke(tenant.user.id, apiKey.id);
    await until(() => closedWith !== undefined, 3000);
    expect(closedWith).toBe(4401);
    expect(stream.received).toEqual([]);
    await revocable.dispose();
  });
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/principal.js';
import { MAX_QUEUED_EVENTS } from '../../src/domain/events/event-feed.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import { stampAll } from '../helpers/events.js';

/**
 * A subscriber that reads slower than its events arrive (a socket whose buffer is full: graphql-ws
 * then waits before taking the next event) holds at most MAX_QUEUED_EVENTS in memory; past that its
 * queue is dropped and its events are read again from the table, so it still gets every event once,
 * in order.
 */
describe('a slow subscriber', () => {
  let services: Services;
  beforeAll(async () => {
    services = await createTestServices();
  });
  afterAll(async () => {
    services.eventFeed.stop();
  });

  it('holds at most the cap in memory while it does not read, then gets every event once, in order', async () => {
    const tenant = await seedTenant(services);
    const principal = { userId: tenant.user.id, environment: 'sandbox' } as Principal;
    const stream = services.eventFeed.subscribe(principal, ['deposit.completed'], undefined);
    // The first `next` registers the subscriber and waits for an event; nothing else is read until
    // every event below has been committed, stamped and offered to it.
    const first = stream.next();
    const total = MAX_QUEUED_EVENTS * 2 + 500;
    let highest = 0;
    for (let written = 0; written < total; written += 500) {
      await services.db.execute(sql`
        insert into events (type, user_id, environment, data, created_at)
        select 'deposit.completed', ${tenant.user.id}, 'sandbox', jsonb_build_object('n', ${written} + g), now()
        from generate_series(1, 500) g`);
      await stampAll(services.db);
      // Offered as each batch is stamped (the feed's own reads too): never more than the cap held.
      highest = Math.max(highest, services.eventFeed.queuedEvents);
    }
    expect(highest).toBeLessThanOrEqual(MAX_QUEUED_EVENTS);
    const received: number[] = [];
    const seqs: number[] = [];
    const firstEvent = (await first).value!;
    received.push(Number(firstEvent.data['n']));
    seqs.push(firstEvent.seq!);
    while (received.length < total) {
      const { value } = await stream.next();
      received.push(Number(value!.data['n']));
      seqs.push(value!.seq!);
    }
    expect(received).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(services.eventFeed.queuedEvents).toBe(0);
    await stream.return?.(undefined);
  });
});

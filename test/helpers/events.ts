import { inArray, isNull, and, count } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { events } from '../../src/db/schema.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { waitUntil } from './wait.js';

/**
 * Runs the relay until the given events are stamped. One pass is not enough when other test files
 * hold transactions open: the relay stamps only events older than every open transaction.
 */
export async function stampEvents(db: Database, ids: readonly string[], timeoutMs = 10_000): Promise<void> {
  await waitUntil(async () => {
    await stampCommittedEvents(db, { wait: true });
    const [row] = await db
      .select({ n: count() })
      .from(events)
      .where(and(inArray(events.id, [...ids]), isNull(events.seq)));
    return Number(row?.n ?? 0) === 0;
  }, timeoutMs);
}

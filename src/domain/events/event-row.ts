import type { events } from '../../db/schema.js';
import type { StoredEvent } from './event.js';

type EventRow = typeof events.$inferSelect;

/**
 * An events-table row as the domain's StoredEvent (created in Unix seconds). An event a facade
 * took from its upstream keeps the upstream's id: partners dedupe by it, whichever way it came.
 */
export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.sourceId ?? row.id,
    type: row.type,
    created: Math.floor(row.createdAt.getTime() / 1000),
    data: row.data as Record<string, unknown>,
    userId: row.userId,
    environment: row.environment,
    seq: row.seq,
  };
}

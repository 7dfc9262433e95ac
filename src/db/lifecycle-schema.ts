import { bigserial, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Every status change of a value-moving operation (deposit, payout, bill, wallet transaction,
 * offramp order, chain send, swap), written in the transaction that makes it: the history an
 * operator reads when asking "how did this get here?". Only moves the kind's table allows are
 * ever written (src/domain/lifecycle).
 */
export const operationTransitions = pgTable(
  'operation_transitions',
  {
    id: bigserial('id', { mode: 'bigint' }).primaryKey(),
    kind: text('kind').notNull(),
    operationId: uuid('operation_id').notNull(),
    fromStatus: text('from_status').notNull(),
    toStatus: text('to_status').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [
    index('operation_transitions_operation_idx').on(t.kind, t.operationId, t.id),
    // Retention finds a kind's old history by `at` (src/domain/retention): without it each batch
    // read every operation of the kind ever finished.
    index('operation_transitions_kind_at_idx').on(t.kind, t.at),
  ],
);

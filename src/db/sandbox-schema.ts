import { sql } from 'drizzle-orm';
import { bigint, check, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { environmentEnum, userRef } from './schema.js';

/**
 * A sandbox test clock (docs/sandbox.md#test-clocks): the time of the one sandbox account it is
 * attached to is the wall clock plus `offset_ms`, which only ever grows (an advance). The check
 * keeps production out of this table whatever the code does.
 */
export const testClocks = pgTable(
  'test_clocks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: userRef(),
    environment: environmentEnum('environment').notNull().default('sandbox'),
    name: text('name').notNull(),
    /** The clock's time minus the wall clock's, in ms: 0 when created, grows with each advance. */
    offsetMs: bigint('offset_ms', { mode: 'number' }).notNull().default(0),
    /** Set while the clock drives its account's time; null before `attach` and after `detach`. */
    attachedAt: timestamp('attached_at', { withTimezone: true, mode: 'date' }),
    /**
     * Set while an advance runs, to when its lease lapses: a second advance of the clock is refused
     * meanwhile, and one whose process died frees the clock when the lease lapses.
     */
    advancingUntil: timestamp('advancing_until', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check('test_clocks_sandbox_only', sql`${t.environment} = 'sandbox'`),
    /** At most one clock drives an account. */
    uniqueIndex('test_clocks_attached_account_idx').on(t.userId, t.environment).where(sql`${t.attachedAt} is not null`),
  ],
);

import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { inTransaction, onEventWrites, runStatement, statement } from '../../src/db/plain-sql.js';
import { testDatabase } from '../helpers/database.js';

/**
 * A plain statement that inserts outbox events wakes the event relay whichever runner runs it, so
 * no caller can forget to (a Solana send's statements once did, and their events waited for the
 * relay's idle poll).
 */
describe('plain statements that write events', () => {
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
  });

  // Inserts nothing (`where false`), so it needs no owner; its text is what makes it event-writing.
  const writing = statement(
    'test_event_writing_v1',
    `with e as (insert into events (type, user_id, environment, data)
       select 'test.kind', null, 'sandbox', '{}'::jsonb where false returning id)
     select count(*)::int as n from e`,
  );
  const reading = statement('test_event_reading_v1', 'select count(*)::int as n from events where false');

  it('are told apart by their text', () => {
    expect(writing.writesEvents).toBe(true);
    expect(reading.writesEvents).toBe(false);
    expect(statement('x', 'INSERT  INTO\n events (type) values ($1)').writesEvents).toBe(true);
    expect(statement('y', 'insert into events_archive (id) values ($1)').writesEvents).toBe(false);
  });

  it('tell the listeners after running on their own or inside a transaction, and others do not', async () => {
    let told = 0;
    const stop = onEventWrites(() => told++);
    try {
      await runStatement(db, reading, []);
      expect(told).toBe(0);
      await runStatement(db, writing, []);
      expect(told).toBe(1);
      await inTransaction(db, async (run) => {
        await run(reading, []);
        await run(writing, []);
      });
      expect(told).toBe(2);
    } finally {
      stop();
    }
  });
});

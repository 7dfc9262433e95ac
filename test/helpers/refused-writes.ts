import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';

/**
 * Makes the database refuse some writes as a read-only server refuses them (SQLSTATE 25006, which
 * the gateway answers with 503 and Retry-After): a row trigger on `table` raises for the rows that
 * `when` (SQL over NEW) matches, so exactly the commit that writes them fails and every other goes
 * through. In-process, on PGlite and PostgreSQL alike. Returns the undo, which drops the trigger.
 */
export async function refuseWrites(db: Database, table: string, when: string): Promise<() => Promise<void>> {
  const name = `test_refuse_${randomUUID().replace(/-/g, '')}`;
  await db.execute(
    sql.raw(`create function ${name}() returns trigger language plpgsql as $$
      begin
        raise exception 'refused by the test: the database is read-only' using errcode = '25006';
      end $$`),
  );
  await db.execute(
    sql.raw(`create trigger ${name} before insert or update on ${table}
      for each row when (${when}) execute function ${name}()`),
  );
  return async () => {
    await db.execute(sql.raw(`drop trigger ${name} on ${table}`));
    await db.execute(sql.raw(`drop function ${name}()`));
  };
}

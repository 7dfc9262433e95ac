import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import { type Database, type DatabaseHandle, queryRows } from '../../src/db/client.js';
import { createTestServices } from './app.js';
import { isolatedTestDatabase, onPostgres } from './database.js';

/** The fixed "now" of the retention tests: rows are placed relative to it. */
export const RETENTION_NOW = new Date('2040-06-01T00:00:00Z');
export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/** An ISO time `ms` before RETENTION_NOW. */
export const ago = (ms: number) => new Date(RETENTION_NOW.getTime() - ms).toISOString();

export interface RetentionFixture {
  db: Database;
  userId: string;
}

/**
 * A database of the file's own (on PostgreSQL; the worker's on PGlite) with one user whose rows
 * the file writes, opened before its tests and closed after. Read the fields inside tests.
 */
export function retentionDatabase(label: string): RetentionFixture {
  const fixture = {} as RetentionFixture;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await isolatedTestDatabase();
    fixture.db = handle.db;
    const services = await createTestServices(handle.db);
    fixture.userId = (
      await services.users.createUser({ email: `${label}-${randomUUID()}@example.test`, firstName: 'R', lastName: 'T' })
    ).id;
  });
  afterAll(async () => {
    if (onPostgres) await handle.close();
  });
  return fixture;
}

/** A wallet transaction of the user now at `status`, last changed `updatedAt`, with one history row per move. */
export async function operationWithHistory(
  { db, userId }: RetentionFixture,
  status: string,
  updatedAt: string,
  moves: Array<[from: string, to: string, at: string]>,
): Promise<string> {
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference, created_at, updated_at)
      values (${userId}, 'sandbox', 'DEPOSIT', ${status}::wallet_transaction_status, 100, ${`h-${randomUUID()}`},
        ${ago(200 * DAY_MS)}::timestamptz, ${updatedAt}::timestamptz) returning id`,
  );
  for (const [from, to, at] of moves)
    await db.execute(sql`insert into operation_transitions (kind, operation_id, from_status, to_status, at)
      values ('transaction', ${row!.id}, ${from}, ${to}, ${at}::timestamptz)`);
  return row!.id;
}

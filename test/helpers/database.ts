import { inject } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';

let shared: Promise<DatabaseHandle> | undefined;

export const onPostgres = process.env.TEST_DATABASE === 'postgres';

/** The URL of this run's own PostgreSQL database (PostgreSQL project only). */
export function testDatabaseUrl(): string {
  return inject('testDatabaseUrl');
}

/** This worker's database, migrated once and shared by its test files. */
export function testDatabase(): Promise<DatabaseHandle> {
  shared ??= onPostgres ? openDatabase({ databaseUrl: testDatabaseUrl(), poolSize: 30 }) : openDatabase({ pgliteDataDir: 'memory://' });
  return shared;
}

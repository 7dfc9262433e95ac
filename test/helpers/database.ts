import pg from 'pg';
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
  shared ??= onPostgres
    ? openDatabase({ databaseUrl: testDatabaseUrl(), poolSize: 30 })
    : openDatabase({ pgliteDataDir: 'memory://' });
  return shared;
}

/**
 * A database of the test file's own, on PostgreSQL, for files that run job runners: test files
 * run concurrently against the run's database, and one file's runner would otherwise claim another
 * file's jobs. Named after the run's database, which the global teardown drops with it. On PGlite
 * (files of a worker run one after another) it is the worker's database.
 */
export async function isolatedTestDatabase({ evenOnPglite = false } = {}): Promise<DatabaseHandle> {
  // A file that must see no other file's leftovers at all (an idle instance's statements counted)
  // gets a PGlite of its own too: the worker's has the earlier files' due jobs and retries.
  if (!onPostgres) return evenOnPglite ? openDatabase({ pgliteDataDir: 'memory://' }) : testDatabase();
  return openDatabase({ databaseUrl: await isolatedTestDatabaseUrl(), poolSize: 10 });
}

/**
 * A fresh PostgreSQL database for a file whose child processes share it: a copy of the run's
 * migrated template, or empty for a file that migrates a folder of its own.
 */
export async function isolatedTestDatabaseUrl({ migrated = true } = {}): Promise<string> {
  const base = new URL(testDatabaseUrl());
  const name = `${base.pathname.slice(1)}_iso_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    await admin.query(
      migrated ? `create database ${name} template ${inject('testTemplateDatabase')}` : `create database ${name}`,
    );
  } finally {
    await admin.end();
  }
  base.pathname = `/${name}`;
  return base.toString();
}

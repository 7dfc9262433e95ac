import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.js';

/**
 * Gives this test run a PostgreSQL database of its own (so concurrent runs never see each
 * other's rows), migrates it once, and drops it afterwards. A server that cannot be reached
 * fails the run: only an unset DATABASE_URL skips PostgreSQL.
 */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.DATABASE_URL!;
  const name = `pgw_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
  await handle.close();
  project.provide('testDatabaseUrl', url.toString());
  // A migrated copy nobody connects to: files that need a database of their own are copied from
  // it (CREATE DATABASE … TEMPLATE, a file copy) instead of each replaying every migration.
  const template = new pg.Client({ connectionString: adminUrl });
  await template.connect();
  await template.query(`create database ${name}_template template ${name}`);
  await template.end();
  project.provide('testTemplateDatabase', `${name}_template`);

  return async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    // Files with job runners made databases of their own, named after this one.
    const { rows } = await cleanup.query<{ datname: string }>(
      'select datname from pg_database where datname like $1 or datname = $2',
      [`${name}_iso_%`, `${name}_template`],
    );
    for (const { datname } of rows) await cleanup.query(`drop database if exists ${datname} with (force)`);
    await cleanup.query(`drop database if exists ${name} with (force)`);
    await cleanup.end();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabaseUrl: string;
    /** A migrated database to copy (never connected to, as CREATE DATABASE … TEMPLATE needs). */
    testTemplateDatabase: string;
  }
}

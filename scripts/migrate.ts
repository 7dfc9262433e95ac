import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';

/**
 * Applies pending migrations and exits: the release step of a rolling deploy (then start the
 * instances with MIGRATE_ON_START=false). Safe to run while old instances serve: migrations are
 * written so that the previous version runs against the new schema (see docs/production.md).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const started = Date.now();
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    pgliteDataDir: config.PGLITE_DATA_DIR,
    migrate: true,
    migrationUrl: config.DATABASE_MIGRATION_URL,
  });
  await database.close();
  process.stdout.write(
    `${JSON.stringify({ level: 30, time: Date.now(), msg: 'migrations applied', database: database.describe, durationMs: Date.now() - started })}\n`,
  );
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error instanceof Error ? error.message : error);
  // Drizzle's message names the statement; PostgreSQL's reason (a lock timeout, say) is its cause.
  if (error instanceof Error && error.cause)
    console.error('cause:', error.cause instanceof Error ? error.cause.message : error.cause);
  process.exit(1);
});

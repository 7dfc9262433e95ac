import { seedDemoAccount } from './bootstrap/demo.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, publicUrlOf } from './config.js';
import { openDatabase } from './db/client.js';
import { systemClock } from './domain/clock.js';
import { createServices } from './services.js';
import { startWorkers } from './workers.js';

/** Composition root: config → database → services → app → workers → listen; graceful shutdown. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    pgliteDataDir: config.PGLITE_DATA_DIR,
    migrationUrl: config.DATABASE_MIGRATION_URL,
  });
  let logBackgroundError: (error: unknown) => void = () => undefined;
  const services = createServices(config, database.db, systemClock, (error) => logBackgroundError(error));
  const app = await buildApp({ services, logger: true });
  logBackgroundError = (error) => app.log.error({ err: error }, 'background task failed');
  app.log.info({ database: database.describe }, 'database ready');

  const workers = config.WORKERS ? startWorkers(services, app.log) : undefined;
  const demoKey = config.SEED_DEMO ? await seedDemoAccount(services) : undefined;
  if (!(await services.rateLimiter.ready()))
    app.log.warn('Redis is not reachable yet: rate limits count per process until it is');
  const address = await app.listen({ host: config.HOST, port: config.PORT });

  const base = publicUrlOf(config);
  const lines = [
    `Partner Gateway listening on ${address}`,
    `  GraphQL:  ${base}/graphql`,
    `  REST v1:  ${base}/api/v1  (docs: ${base}/api/v1/docs)`,
  ];
  if (demoKey)
    lines.push(
      '',
      `Sandbox API key (Full Access, shown once): ${demoKey}`,
      `  Try: curl -H "X-API-KEY: ${demoKey}" ${base}/api/v1/user/me`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    app.log.info({ signal }, 'shutting down: draining requests and jobs');
    app.draining = true;
    const force = setTimeout(() => process.exit(1), config.SHUTDOWN_GRACE_MS + 5_000).unref();
    try {
      await app.close();
      await workers?.stop(config.SHUTDOWN_GRACE_MS);
      await database.close();
    } finally {
      clearTimeout(force);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  if (error instanceof Error && error.cause) console.error('cause:', error.cause);
  process.exit(1);
});

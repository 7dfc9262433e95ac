import type { AddressInfo } from 'node:net';
import { type Config, ConfigError, loadConfig, otlpTracesUrlOf, publicUrlOf, publicUrlProblem } from './config.js';
import { openDatabase } from './db/client.js';
import { tuneGarbageCollector } from './gc-tuning.js';
import { shutdownTracing } from './observability/tracing.js';
import { startAfterFirstAnswer } from './bootstrap/after-first-answer.js';

/**
 * Where a person reaches the server just started: PUBLIC_URL when set, else the address and port it
 * listens on (the port the system chose for PORT=0; localhost for a wildcard HOST).
 */
function reachableBase(config: Config, listening: AddressInfo): string {
  if (config.PUBLIC_URL) return publicUrlOf(config);
  const { address, port } = listening;
  const host =
    address === '0.0.0.0' || address === '::' ? 'localhost' : address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${port}`;
}

/** When no request comes first, background work starts this long after listening. */
const WORKER_START_GRACE_MS = 1_000;

/**
 * Composition root: config → database (opening while the other modules load) → services → app →
 * workers → listen; graceful shutdown.
 */
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
  tuneGarbageCollector(config.GC_HEAP_GROWING_PERCENT);
  // The SDK and its exporter load only when traces go somewhere (see tracing-sdk.ts).
  const otlpEndpoint = otlpTracesUrlOf(config);
  if (otlpEndpoint)
    (await import('./observability/tracing-sdk.js')).installTracing({
      otlpEndpoint,
      serviceName: config.OTEL_SERVICE_NAME,
    });
  // The embedded database compiles its WebAssembly and reads its files while the rest of the server's
  // modules load: opening starts first, and is awaited once they are in.
  const opening = openDatabase({
    databaseUrl: config.DATABASE_URL,
    pgliteDataDir: config.PGLITE_DATA_DIR,
    migrate: config.MIGRATE_ON_START,
    migrationUrl: config.DATABASE_MIGRATION_URL,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    poolSize: config.DATABASE_POOL_SIZE,
    readPoolSize: config.DATABASE_READ_POOL_SIZE,
    jobPoolSize: config.DATABASE_JOB_POOL_SIZE,
    sessionTimeouts: {
      statementMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      lockMs: config.DATABASE_LOCK_TIMEOUT_MS,
      idleInTransactionMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
  });
  opening.catch(() => undefined); // awaited below; a failure is reported there, not as unhandled
  const [
    { issueDemoKey, seedDemoUser },
    { buildApp },
    { systemClock },
    { createServices },
    { installGracefulShutdown },
    { startWorkers, announceWrites },
  ] = await Promise.all([
    import('./bootstrap/demo.js'),
    import('./app.js'),
    import('./domain/clock.js'),
    import('./services.js'),
    import('./shutdown.js'),
    import('./workers.js'),
  ]);
  const database = await opening;
  let logBackgroundError: (error: unknown) => void = () => undefined;
  const services = createServices(config, database.db, systemClock, (error) => logBackgroundError(error));
  const app = await buildApp({ services, logger: true });
  logBackgroundError = (error) => app.log.error({ err: error }, 'background task failed');
  services.health.useLog(app.log);
  // A lost connection fails the requests that were using it; the pool replaces it.
  database.onConnectionError((error) => services.health.reportDatabaseError(error));
  app.log.info({ database: database.describe }, 'database ready');
  const publicUrl = publicUrlProblem(config);
  if (publicUrl) app.log.warn({ setting: 'PUBLIC_URL' }, publicUrl);

  if (config.SEED_DEMO) await seedDemoUser(services);
  // Shared limits from the first request when Redis is there; if it is not, `health` has said so once.
  await services.rateLimiter.ready();
  // Sandbox accounts on a test clock run on it from the first request (other instances' changes are
  // read when they announce them, and every 2 s, or 30 s while the wake channel listens).
  await services.testClocks.start();
  const address = await app.listen({ host: config.HOST, port: config.PORT });
  // The demo key is made only now, to be printed below: a start that failed before listening (the
  // port taken) made none, so the first start that listens still has one to show.
  const demoKey = config.SEED_DEMO
    ? await issueDemoKey(services).catch((error: unknown) => {
        app.log.error({ err: error }, 'the demo sandbox key could not be made; the next start tries again');
        return undefined;
      })
    : undefined;

  const base = reachableBase(config, app.server.address() as AddressInfo);
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
  // stdout carries JSON log lines only; the banner (and the demo key, which no log may hold) is for a person.
  app.log.info(
    { address, graphql: `${base}/graphql`, rest: `${base}/api/v1`, demoKeyPrinted: Boolean(demoKey) },
    'ready',
  );
  process.stderr.write(`${lines.join('\n')}\n`);
  // Background work starts once the server has answered (see after-first-answer.ts): its first
  // rounds share the embedded database's one connection and the main thread with the first request.
  const workers = config.WORKERS
    ? startAfterFirstAnswer(app.server, WORKER_START_GRACE_MS, () => startWorkers(services, app.log))
    : undefined;
  // Other instances hear of this one's jobs and test clock changes, and of its events when it runs no relay of its own.
  announceWrites(services.db, { events: !config.WORKERS, testClocks: services.testClocks });

  installGracefulShutdown({ app, workers, database, config, onClosed: shutdownTracing });
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  if (error instanceof Error && error.cause) console.error('cause:', error.cause);
  process.exit(1);
});

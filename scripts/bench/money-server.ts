/**
 * The gateway under load in `npm run bench:money`: the real app on DATABASE_URL (or PGlite in
 * memory without it), with 100 funded tenants, each with an API key and one enabled webhook
 * endpoint subscribed to every event (so every event writes its delivery and its job), plus one
 * treasury tenant (the hot wallet). The event relay runs here as the workers run it (stamping lag
 * is measured on every batch); the job runner does not (deliveries stay queued: their writes are
 * measured, not their sending). A side port answers `GET /stats` with round trips and stamping
 * lags and relay transactions since the last call (first making its pools' sessions report their
 * counters to pg_stat_database: stats-flush.ts), and `GET /unstamped` with whether committed
 * events still wait for their seq (the bench drains the relay before it reads this process's CPU).
 * Prints `{"ready":true,"pid":…,"port":…,"statsPort":…,"tenants":[{"id","key","keyId"}…],"treasury":…}`.
 */
import { createServer } from 'node:http';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { onStamped, startRelay } from '../../src/domain/events/relay.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createServices } from '../../src/services.js';
import { tuneGarbageCollector } from '../../src/gc-tuning.js';
import { fanOutBehind } from '../../src/domain/events/fan-out.js';
import { countStatements } from './statement-counter.js';
import { statsSinceLastCall } from './stats-flush.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
// `npm run bench:money -- --endpoints 0` leaves the tenants without a webhook endpoint.
const ENDPOINTS = process.env.BENCH_ENDPOINTS !== '0';
const FUNDS = 1_000_000_000_000n;

const config = loadConfig(process.env, {
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
// As main.ts: the collector tuned as the gateway runs (GC_HEAP_GROWING_PERCENT).
tuneGarbageCollector(config.GC_HEAP_GROWING_PERCENT);
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: 'memory://', poolSize: 20 });
const services = createServices(config, database.db, systemClock, () => undefined);
const db = services.db;
const stamp = Date.now();

async function tenant(i: number) {
  const user = await services.users.createUser({ email: `money-${stamp}-${i}@example.test` });
  const { key, apiKey } = await services.apiKeys.create({
    userId: user.id,
    name: 'bench',
    environment: 'sandbox',
    permission: 'FULL_ACCESS',
  });
  if (ENDPOINTS)
    await db.execute(sql`
    insert into webhook_endpoints (id, user_id, environment, url, secret_sealed, event_types, enabled)
    values (gen_random_uuid(), ${user.id}, 'sandbox', 'https://hooks.example.test/money', ${`whsec_${stamp}_${i}`}, '{*}', true)`);
  await db.transaction((tx) =>
    ledger.post(tx, {
      environment: 'sandbox',
      kind: 'bench-funding',
      reference: `${stamp}-${i}`,
      lines: [
        { account: systemAccount('sandbox', 'provider_clearing'), amount: -FUNDS },
        { account: walletOf('sandbox', user.id), amount: FUNDS },
      ],
    }),
  );
  return { id: user.id, key, keyId: apiKey.id };
}

const tenants = [];
for (let i = 0; i < TENANTS; i++) tenants.push(await tenant(i));
const treasury = await tenant(TENANTS);

// Round trips and writing commits (statement-counter.ts): every statement a pooled PostgreSQL
// client sends, or PGlite runs, counted as every bare-pg peer of the bench counts its own.
const pglite = (db as unknown as { $client: Record<string, (...a: unknown[]) => unknown> }).$client;
const { counter } = countStatements(pglite);

// What makes a latency tail: the event loop blocked (GC, synchronous work: PGlite runs in this
// thread) and, on PGlite, its one connection held long by one statement or transaction. With
// BENCH_HOLDS=1 the callers of transactions holding it over 100 ms are printed to stderr.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
let longestHold = 0;
// Garbage collection's share of those stalls: its longest pause and its total pause time.
let gcMax = 0;
let gcTotal = 0;
let majorGcs: Array<{ endedAt: number; pauseMs: number; heapMiB: number }> = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMax = Math.max(gcMax, entry.duration);
    gcTotal += entry.duration;
    // A full (mark-compact) collection: when it ended, on the wall clock, and the heap it left.
    if (
      (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR
    )
      majorGcs.push({
        endedAt: performance.timeOrigin + entry.startTime + entry.duration,
        pauseMs: entry.duration,
        heapMiB: process.memoryUsage().heapUsed / 2 ** 20,
      });
  }
}).observe({ entryTypes: ['gc'] });
if (!(pglite instanceof pg.Pool)) {
  const client = pglite as unknown as {
    _runExclusiveTransaction: (fn: () => Promise<unknown>) => Promise<unknown>;
    transaction: (cb: (tx: unknown) => Promise<unknown>) => Promise<unknown>;
  };
  const exclusive = client._runExclusiveTransaction.bind(client);
  client._runExclusiveTransaction = (fn) =>
    exclusive(async () => {
      const started = performance.now();
      try {
        return await fn();
      } finally {
        longestHold = Math.max(longestHold, performance.now() - started);
      }
    });
  if (process.env.BENCH_HOLDS === '1') {
    const transaction = client.transaction.bind(client);
    client.transaction = (cb) => {
      const caller = new Error().stack?.split('\n').slice(2, 9).join(' <') ?? '';
      return transaction(async (tx) => {
        const started = performance.now();
        try {
          return await cb(tx);
        } finally {
          const ms = performance.now() - started;
          if (ms > 100) process.stderr.write(`hold ${Math.round(ms)} ms: ${caller}\n`);
        }
      });
    };
  }
}

// The relay, as the workers run it (startRelay: woken by each commit's hint, its own connection).
let lags: number[] = [];
onStamped((batch) => {
  for (const lag of batch) lags.push(lag);
});
let relayRuns = 0;
const relay = startRelay(db, { onRound: () => relayRuns++ });

const app = await buildApp({ services, logger: process.env.BENCH_LOG === '1' });
await app.listen({ port: 0, host: '127.0.0.1' });
// The pools behind the app's handle (request, read, jobs; the relay has its own connection): their
// sessions are made to report their counters before the bench reads pg_stat_database (stats-flush.ts).
const pools: pg.Pool[] =
  pglite instanceof pg.Pool ? ((pglite as unknown as { distinct?: () => pg.Pool[] }).distinct?.() ?? [pglite]) : [];

const stats = createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  if (request.url === '/unstamped') {
    // Whether committed events still wait for their seq: the bench waits for the relay to drain
    // each round's events before it reads this process's CPU (PGlite: no other connection can ask).
    // Fanned out too: the relay writes the events' deliveries and jobs after stamping them, and
    // that work is the server's, counted in its CPU like the stamping.
    void db
      .execute(sql.raw(`select exists (select 1 from events where seq is null) or ${fanOutBehind} as waiting`))
      .then(
        (result) => {
          const rows = (result as unknown as { rows: Array<{ waiting: boolean }> }).rows;
          response.end(JSON.stringify({ waiting: rows[0]?.waiting === true }));
        },
        (error: Error) => response.end(JSON.stringify({ waiting: false, error: error.message })),
      );
    return;
  }
  // `?flush=0`: counts only (a second has not passed since the last flush: see stats-flush.ts).
  void statsSinceLastCall(counter, request.url?.endsWith('flush=0') ? [] : pools).then(
    (counts) => response.end(answer(counts)),
    (error: Error) => {
      response.statusCode = 500;
      response.end(JSON.stringify({ error: error.message }));
    },
  );
});
/** The figures since the last call, and a fresh start. */
function answer({
  roundTrips,
  writingCommits,
  flushed,
}: {
  roundTrips: number;
  writingCommits: number;
  flushed: number;
}) {
  const body = JSON.stringify({
    roundTrips,
    flushed,
    lags,
    relayRuns,
    writingCommits,
    loopDelayMaxMs: loopDelay.max / 1e6,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    longestHoldMs: longestHold,
    gcMaxMs: gcMax,
    gcTotalMs: gcTotal,
    majorGcs,
  });
  majorGcs = [];
  gcMax = 0;
  gcTotal = 0;
  loopDelay.reset();
  longestHold = 0;
  lags = [];
  relayRuns = 0;
  return body;
}
await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));

process.stdout.write(
  `${JSON.stringify({
    ready: true,
    pid: process.pid,
    port: (app.server.address() as { port: number }).port,
    statsPort: (stats.address() as { port: number }).port,
    tenants,
    treasury,
  })}\n`,
);
process.on('SIGTERM', async () => {
  await relay.stop();
  stats.close();
  await app.close();
  await database.close();
  process.exit(0);
});

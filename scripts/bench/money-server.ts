/**
 * The gateway under load in `npm run bench:money`: the real app on DATABASE_URL (or PGlite in
 * memory without it), with 100 funded tenants, each with an API key and one enabled webhook
 * endpoint subscribed to every event (so every event writes its delivery and its job), plus one
 * treasury tenant (the hot wallet). The event relay runs here as the workers run it (stamping lag
 * is measured on every batch); the job runner does not (deliveries stay queued: their writes are
 * measured, not their sending). A side port answers `GET /stats` with round trips and stamping
 * lags and relay transactions since the last call. Prints `{"ready":true,"pid":…,"port":…,"statsPort":…,"tenants":[…]}`.
 */
import { createServer } from 'node:http';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { onStamped, stampCommittedEvents } from '../../src/domain/events/relay.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createServices } from '../../src/services.js';
import { RELAY_BUSY_MS } from '../../src/workers.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 100);
const FUNDS = 1_000_000_000_000n;

const config = loadConfig(process.env, {
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: 'memory://', poolSize: 20 });
const services = createServices(config, database.db, systemClock, () => undefined);
const db = services.db;
const stamp = Date.now();

async function tenant(i: number) {
  const user = await services.users.createUser({ email: `money-${stamp}-${i}@example.test` });
  const { key } = await services.apiKeys.create({
    userId: user.id,
    name: 'bench',
    environment: 'sandbox',
    permission: 'FULL_ACCESS',
  });
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
  return { id: user.id, key };
}

const tenants = [];
for (let i = 0; i < TENANTS; i++) tenants.push(await tenant(i));
const treasury = await tenant(TENANTS);

// Round trips: every statement a pooled PostgreSQL client sends, or PGlite runs. Writing commits:
// transactions that wrote and committed, and statements that wrote on their own (autocommit);
// pg_stat_database counts read-only statements as commits too.
let roundTrips = 0;
let writingCommits = 0;
const WRITES = /\b(insert|update|delete)\b/i;
const inTransaction = new WeakMap<object, { wrote: boolean }>();
const noteStatement = (session: object, first: unknown) => {
  const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
  if (/^\s*begin\b/i.test(text)) inTransaction.set(session, { wrote: false });
  else if (/^\s*(commit|rollback)\b/i.test(text)) {
    if (/^\s*commit/i.test(text) && inTransaction.get(session)?.wrote) writingCommits++;
    inTransaction.delete(session);
  } else if (WRITES.test(text)) {
    const open = inTransaction.get(session);
    if (open) open.wrote = true;
    else writingCommits++;
  }
};
const pglite = (db as unknown as { $client: Record<string, (...a: unknown[]) => unknown> }).$client;
const counted: Array<[Record<string, (...a: unknown[]) => unknown>, string]> =
  pglite instanceof pg.Pool
    ? [[pg.Client.prototype as never, 'query']]
    : [
        [pglite, 'query'],
        [pglite, 'exec'],
      ];
for (const [target, name] of counted) {
  const original = target[name]!;
  target[name] = function (this: object, ...args: unknown[]) {
    roundTrips++;
    noteStatement(this, args[0]);
    return original.apply(this, args);
  };
}

// The relay, as the workers run it: again at once while busy (PostgreSQL), every 100 ms when idle.
let lags: number[] = [];
onStamped((batch) => {
  for (const lag of batch) lags.push(lag);
});
let stopped = false;
let relayRuns = 0;
const relay = async () => {
  while (!stopped) {
    relayRuns++;
    const stamped = await stampCommittedEvents(db).catch(() => 0);
    await new Promise((resolve) => setTimeout(resolve, stamped > 0 && config.DATABASE_URL ? RELAY_BUSY_MS : 100));
  }
};
void relay();

const app = await buildApp({ services, logger: process.env.BENCH_LOG === '1' });
await app.listen({ port: 0, host: '127.0.0.1' });
const stats = createServer((_request, response) => {
  const body = JSON.stringify({ roundTrips, lags, relayRuns, writingCommits });
  roundTrips = 0;
  writingCommits = 0;
  lags = [];
  relayRuns = 0;
  response.setHeader('content-type', 'application/json');
  response.end(body);
});
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
  stopped = true;
  stats.close();
  await app.close();
  await database.close();
  process.exit(0);
});

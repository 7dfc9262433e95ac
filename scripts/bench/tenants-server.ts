/**
 * Server side of the chain sends benches (scripts/bench/money-solana.ts, evm-sends.ts): the gateway
 * with BENCH_TENANTS users, one Full Access sandbox key each. Workers run (the confirmation jobs
 * each transfer enqueues are part of its cost) unless WORKERS=false. Prints one JSON line when ready.
 */
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { startWorkers } from '../../src/workers.js';

// BENCH_COUNT=1: count the statements sent to PostgreSQL by their first words, printed at exit.
const statementCounts = new Map<string, number>();
if (process.env.BENCH_COUNT === '1') {
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { name?: string; text?: string };
    const text = typeof first === 'string' ? first : (first?.name ?? first?.text ?? '');
    const label = text.replace(/\s+/g, ' ').slice(0, 70);
    statementCounts.set(label, (statementCounts.get(label) ?? 0) + 1);
    return original.apply(this, args);
  } as never;
}

const tenants = Number(process.env.BENCH_TENANTS ?? 16);
const config = loadConfig(process.env, {
  LOG_LEVEL: 'silent',
  SEED_DEMO: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
const database = await openDatabase(
  config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : { pgliteDataDir: 'memory://' },
);
const services = createServices(config, database.db, systemClock, () => undefined);
const keys: string[] = [];
for (let i = 0; i < tenants; i++) {
  const user = await services.users.createUser({ email: `chain-bench-${i}-${Date.now()}@example.test` });
  const { key } = await services.apiKeys.create({
    userId: user.id,
    name: 'bench',
    environment: 'sandbox',
    permission: 'FULL_ACCESS',
  });
  keys.push(key);
}
const app = await buildApp({ services });
if (config.WORKERS) startWorkers(services, app.log);
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ ready: true, pid: process.pid, port: (app.server.address() as { port: number }).port, keys })}\n`,
);
// Exit (not die) on SIGTERM, so `node --cpu-prof` writes its profile.
process.on('SIGTERM', async () => {
  await app.close().catch(() => undefined);
  if (statementCounts.size > 0)
    process.stderr.write(
      `${[...statementCounts]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${n}\t${k}`)
        .join('\n')}\n`,
    );
  process.exit(0);
});

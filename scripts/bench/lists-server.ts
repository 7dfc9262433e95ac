/**
 * Server side of `npm run bench:lists`: the gateway with three users owning 100, 10,000 and 100,000
 * bill records and as many wallet transactions (BENCH_SIZES), plus a fourth user with the largest
 * number of each so the owner condition has rows to skip. With BENCH_POPULATION (rows of each table
 * in all) and BENCH_USERS, the rest of the population is spread evenly over that many users in all,
 * with the same reference patterns as the measured users' (so a search term matches rows of every
 * user, as a common prefix does in a real table). Rows are inserted by SQL (the lists read them;
 * nothing here moves money). Prints `{"ready":true,"pid":…,"port":…,"keys":{"100":"…",…}}`.
 */
import { sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { onEveryPoolQuery } from './pool-queries.js';

const sizes = (process.env.BENCH_SIZES ?? '100,10000,100000').split(',').map(Number);
const population = Number(process.env.BENCH_POPULATION ?? 0);
const users = Number(process.env.BENCH_USERS ?? 0);
const config = loadConfig(process.env, {
  LOG_LEVEL: 'silent',
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
const database = await openDatabase(
  config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : { pgliteDataDir: 'memory://' },
);
const services = createServices(config, database.db, systemClock, () => undefined);
const stamp = Date.now();

/** Seeds in statements of 10,000 rows: one statement of 100,000 can outlast the statement timeout on a busy machine. */
async function seed(userId: string, records: number): Promise<void> {
  for (let from = 1; from <= records; from += 10_000) await seedRange(userId, from, Math.min(records, from + 9_999));
}

async function seedRange(userId: string, first: number, last: number): Promise<void> {
  await services.db.execute(sql`
    insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider, tx_ref, created_at, updated_at)
    select ${userId}, 'sandbox', 'BENCH-' || g, (array['BIL099','BIL100','BIL119','BIL200'])[1 + g % 4], 'AT099',
      '0803' || lpad((g % 10000)::text, 7, '0'), (100 + g % 50000) * 100, 0,
      (array['AIRTIME','MOBILEDATA','CABLEBILLS','UTILITYBILLS'])[1 + g % 4]::bill_type,
      (array['SUCCESS','SUCCESS','SUCCESS','FAILED','PENDING'])[1 + g % 5]::bill_status,
      (array['MTN Airtime','Airtel Airtime','DStv','Ikeja Electric Prepaid'])[1 + g % 4], 'sandbox', 'SBX-FLYAPI-' || g,
      now() - (g || ' minutes')::interval, now() - ((g % 997) || ' minutes')::interval
    from generate_series(${first}::int, ${last}::int) g`);
  await services.db.execute(sql`
    insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference, description, created_at, updated_at)
    select ${userId}, 'sandbox',
      (array['DEPOSIT','WITHDRAWAL','TRANSFER_IN','TRANSFER_OUT','BILL'])[1 + g % 5]::wallet_transaction_type,
      (array['COMPLETED','COMPLETED','COMPLETED','FAILED','PENDING'])[1 + (g / 5) % 5]::wallet_transaction_status,
      (100 + g % 50000) * 100, 0, 'TX-BENCH-' || g, 'bench', now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
    from generate_series(${first}::int, ${last}::int) g`);
}

const keys: Record<string, string> = {};
for (const size of sizes) {
  const user = await services.users.createUser({ email: `lists-${size}-${stamp}@example.test` });
  await seed(user.id, size);
  keys[String(size)] = (
    await services.apiKeys.create({ userId: user.id, name: 'bench', environment: 'sandbox', permission: 'READ_ONLY' })
  ).key;
}
const other = await services.users.createUser({ email: `lists-other-${stamp}@example.test` });
await seed(other.id, Math.max(...sizes));
// The rest of the population over the rest of the users, a few users' rows per statement.
const seeded = sizes.reduce((sum, size) => sum + size, 0) + Math.max(...sizes);
const restUsers = Math.max(0, users - sizes.length - 1);
if (population > seeded && restUsers > 0) {
  const each = Math.floor((population - seeded) / restUsers);
  const started = Date.now();
  for (let i = 0; i < restUsers; i++) {
    const user = await services.users.createUser({ email: `lists-crowd-${i}-${stamp}@example.test` });
    await seed(user.id, each);
  }
  console.error(`seeded ${restUsers} more users with ${each} rows of each list in ${Date.now() - started} ms`);
}
// As autovacuum leaves tables in steady state: statistics, and the visibility map index-only scans need.
await services.db.execute(sql`vacuum analyze bill_records`);
await services.db.execute(sql`vacuum analyze wallet_transactions`);
// Time spent waiting on SQL, summed over statements: GET /bench/sql answers it and starts over, so
// the driver can tell the database's share of a request from the HTTP and GraphQL layers'.
let sqlMs = 0;
let statements = 0;
onEveryPoolQuery(
  services.db,
  (query) =>
    function (this: unknown, ...args: unknown[]) {
      const started = performance.now();
      statements += 1;
      const result = query.apply(this, args);
      void Promise.resolve(result)
        .catch(() => undefined)
        .then(() => {
          sqlMs += performance.now() - started;
        });
      return result;
    },
);
const app = await buildApp({ services });
app.get('/bench/sql', async () => {
  const answer = { sqlMs, statements };
  sqlMs = 0;
  statements = 0;
  return answer;
});
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ ready: true, pid: process.pid, port: (app.server.address() as { port: number }).port, keys })}\n`,
);
process.on('SIGTERM', async () => {
  await app.close();
  await database.close();
  process.exit(0);
});

/**
 * Server side of `npm run bench:lists`: the gateway with users owning 100, 10,000 and 100,000 bill
 * records and as many wallet transactions (BENCH_SIZES), plus one more user with the largest number
 * of each so the owner condition has rows to skip. With BENCH_POPULATION (rows of each table in all)
 * and BENCH_USERS, the rest of the population is spread evenly over that many users in all. Rows
 * are inserted by SQL (scripts/bench/list-population.ts). A database that already holds the bench's
 * users (kept by an earlier run) is measured as it is. Prints
 * `{"ready":true,"pid":…,"port":…,"keys":{"100":"…",…}}`.
 */
import { sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, queryRows } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { type Owner, seedPopulation } from './list-population.js';
import { onEveryPoolQuery } from './pool-queries.js';
import { statementPlans } from './statement-plans.js';

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

const keys: Record<string, string> = {};
const keyFor = async (userId: string) =>
  (await services.apiKeys.create({ userId, name: 'bench', environment: 'sandbox', permission: 'READ_ONLY' })).key;
// A database kept by an earlier run (`--keep`, then `--database`) is measured again as it is.
const kept = await queryRows<{ id: string; email: string }>(
  services.db,
  sql`select id, email from users where email like 'lists-%' and email not like 'lists-crowd-%'`,
);
if (kept.length > 0) {
  for (const size of sizes) {
    const user = kept.find((u) => u.email.startsWith(`lists-${size}-`));
    if (!user) throw new Error(`the kept database has no user with ${size} rows`);
    keys[String(size)] = await keyFor(user.id);
  }
} else {
  const owners: Owner[] = [];
  for (const size of sizes) {
    const user = await services.users.createUser({ email: `lists-${size}-${stamp}@example.test` });
    owners.push({ userId: user.id, rows: size });
    keys[String(size)] = await keyFor(user.id);
  }
  const other = await services.users.createUser({ email: `lists-other-${stamp}@example.test` });
  owners.push({ userId: other.id, rows: Math.max(...sizes) });
  // The rest of the population over the rest of the users, the remainder to the first few.
  const seeded = owners.reduce((sum, o) => sum + o.rows, 0);
  const restUsers = Math.max(0, users - sizes.length - 1);
  if (population > seeded && restUsers > 0) {
    const each = Math.floor((population - seeded) / restUsers);
    const remainder = population - seeded - each * restUsers;
    const crowd = await queryRows<{ id: string }>(
      services.db,
      sql`insert into users (email) select 'lists-crowd-' || i || '-' || ${stamp} || '@example.test'
            from generate_series(1, ${restUsers}::int) i returning id`,
    );
    crowd.forEach(({ id }, i) => owners.push({ userId: id, rows: each + (i < remainder ? 1 : 0) }));
  }
  const started = Date.now();
  await seedPopulation(services.db, owners);
  const rows = owners.reduce((sum, o) => sum + o.rows, 0);
  console.error(`seeded ${rows} rows of each list over ${owners.length} users in ${Date.now() - started} ms`);
}
// Time spent waiting on SQL, summed over statements: GET /bench/sql answers it and starts over, so
// the driver can tell the database's share of a request from the HTTP and GraphQL layers'.
let sqlMs = 0;
let statements = 0;
const plans = statementPlans();
onEveryPoolQuery(
  services.db,
  (query) =>
    function (this: unknown, ...args: unknown[]) {
      const started = performance.now();
      statements += 1;
      plans.record(query, this, args);
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
// GET /bench/plans/start, one request, then GET /bench/plans: that request's statements explained.
app.get('/bench/plans/start', async () => {
  plans.start();
  return {};
});
app.get('/bench/plans', async () => {
  try {
    return { plans: await plans.explain() };
  } catch (error) {
    return { plans: [`explain failed: ${(error as Error).message}`] };
  }
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

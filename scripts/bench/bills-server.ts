/**
 * Server side of `npm run bench:bills`: the gateway with one user owning BENCH_RECORDS bill records
 * (default 100,000), inserted in one statement. Prints one JSON line when ready.
 */
import { sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';

const records = Number(process.env.BENCH_RECORDS ?? 100_000);
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
const user = await services.users.createUser({ email: `bills-bench-${Date.now()}@example.test` });
const { key } = await services.apiKeys.create({
  userId: user.id,
  name: 'bench',
  environment: 'sandbox',
  permission: 'READ_ONLY',
});
// Another user's rows too, so the owner filter has something to filter out.
const other = await services.users.createUser({ email: `bills-bench-other-${Date.now()}@example.test` });
for (const owner of [user.id, other.id]) {
  await services.db.execute(sql`
    insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider, tx_ref, created_at, updated_at)
    select ${owner}, 'sandbox', 'BENCH-' || g, (array['BIL099','BIL100','BIL119','BIL200'])[1 + g % 4], 'AT099',
      '0803' || lpad((g % 10000)::text, 7, '0'), (100 + g % 50000) * 100, 0,
      (array['AIRTIME','MOBILEDATA','CABLEBILLS','UTILITYBILLS'])[1 + g % 4]::bill_type,
      (array['SUCCESS','SUCCESS','SUCCESS','FAILED','PENDING'])[1 + g % 5]::bill_status,
      (array['MTN Airtime','Airtel Airtime','DStv','Ikeja Electric Prepaid'])[1 + g % 4], 'sandbox', 'SBX-FLYAPI-' || g,
      now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
    from generate_series(1, ${records}) g`);
}
// As autovacuum leaves a table in steady state: statistics, and the visibility map index-only scans need.
await services.db.execute(sql`vacuum analyze bill_records`);
const app = await buildApp({ services });
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ ready: true, pid: process.pid, port: (app.server.address() as { port: number }).port, key })}\n`,
);

/**
 * `npm run bench:money-sql`: what it costs the gateway's process to send one hot-path statement,
 * three ways, against the same PostgreSQL database, one request at a time, interleaved rounds:
 * Drizzle's `sql` template (built per call, as the stores used to), plain parameterised text
 * (parsed by the server every time), and a named prepared statement (parsed once per connection).
 * The statement is the idempotency claim's (an advisory lock and the key's row): small, so the
 * figure is the client's and the protocol's cost, not the database's work. Reports client CPU µs
 * and wall µs per statement, medians of the rounds.
 *
 *   DATABASE_URL=postgres://… npm run bench:money-sql -- [--count 3000] [--rounds 3]
 */
import { benchArgs } from './harness/options.js';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { machineLine, median } from './harness/index.js';

const { values } = benchArgs({
  options: { count: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } },
});
const count = Number(values.count);
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  max: 1,
});
const db = drizzle(pool);

const TEXT = `select l.locked, k.status from (select pg_try_advisory_xact_lock($1::bigint) as locked) l
  left join idempotency_keys k on l.locked and k.user_id = $2::uuid and k.environment = $3::environment
  and k.operation = $4::text and k.key = $5::text`;
const args = (i: number) => [String(i), '00000000-0000-4000-8000-000000000000', 'sandbox', 'bench.sql', `k-${i}`];

const ways: Record<string, (i: number) => Promise<unknown>> = {
  'drizzle sql template': (i) => {
    const [lock, user, environment, operation, key] = args(i);
    return db.execute(sql`select l.locked, k.status from (select pg_try_advisory_xact_lock(${lock}::bigint) as locked) l
      left join idempotency_keys k on l.locked and k.user_id = ${user}::uuid and k.environment = ${environment}::environment
      and k.operation = ${operation}::text and k.key = ${key}::text`);
  },
  'plain parameterised': (i) => pool.query(TEXT, args(i)),
  'named prepared': (i) => pool.query({ name: 'bench_claim', text: TEXT, values: args(i) }),
};

const samples = new Map<string, Array<{ cpu: number; wall: number }>>(Object.keys(ways).map((w) => [w, []]));
for (const run of Object.values(ways)) for (let i = 0; i < 200; i++) await run(i);
for (let round = 0; round < Number(values.rounds); round++) {
  const names = Object.keys(ways);
  for (const name of names.map((_, i) => names[(i + round) % names.length]!)) {
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) await ways[name]!(i);
    const wall = Number(process.hrtime.bigint() - start) / 1000 / count;
    const used = process.cpuUsage(cpu);
    samples.get(name)!.push({ cpu: (used.user + used.system) / count, wall });
  }
}
console.log(machineLine());
console.log(`${count} statements per way per round, ${values.rounds} interleaved rounds, medians\n`);
console.log('| way | client CPU µs/statement | wall µs/statement |');
console.log('|---|---|---|');
for (const [name, rows] of samples)
  console.log(
    `| ${name} | ${Math.round(median(rows.map((r) => r.cpu)))} | ${Math.round(median(rows.map((r) => r.wall)))} |`,
  );
await pool.end();

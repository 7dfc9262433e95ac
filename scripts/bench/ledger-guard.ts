/**
 * What the database's posting-balance guard (migration 0031: deferred constraint triggers on
 * ledger_postings and ledger_entries) costs each money write: the same writes one at a time, in
 * interleaved rounds with the guard's two triggers enabled and disabled, on a fresh database. Four
 * shapes: ledger.post of two lines (a deposit, a release) and of three (a capture), each in its own
 * transaction; one autocommit statement writing a posting, its two entries and both balances (the
 * one-statement transfer's ledger part); and a DO block writing postings in a loop, where nearly
 * all the backend's CPU is the inserts and the guard. Reports the database's CPU µs per write (the
 * backend's, read from /proc, on PostgreSQL; the whole process's on PGlite, which runs in it) and
 * wall µs, medians of the rounds, and, on PostgreSQL, how often the trigger function ran per write
 * and its own time per call (pg_stat_user_functions; wall time, so inflated on a loaded machine).
 *
 *   DATABASE_URL=postgres://… npx tsx scripts/bench/ledger-guard.ts [--engine postgres|pglite] [--count 1000]
 *     [--loop-postings 20000] [--rounds 5] [--only <part of a shape's name>]
 */
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { openDatabase, queryRows } from '../../src/db/client.js';
import { runStatement, statement } from '../../src/db/plain-sql.js';
import { holdsOf, ledger, type PostingLine, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { benchDatabase } from './database.js';
import { cpuMicros, machineLine, median } from './harness/index.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    engine: { type: 'string', default: 'postgres' },
    count: { type: 'string', default: '1000' },
    'loop-postings': { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    /** Only the shapes whose name contains this. */
    only: { type: 'string', default: '' },
  },
});
const count = Number(values.count);
const rounds = Number(values.rounds);
const onPostgres = values.engine === 'postgres';
const scratch = await benchDatabase(values.engine!);
if (onPostgres) {
  // The trigger function's own time, counted per call (settable by a superuser: the bench's owner).
  const setup = await openDatabase({ databaseUrl: scratch.url, poolSize: 1 });
  await setup.db.execute(
    sql.raw(`alter database ${new URL(scratch.url).pathname.slice(1)} set track_functions = 'pl'`),
  );
  await setup.close();
}
// One connection: every write runs on the backend whose function statistics are read.
const handle = onPostgres
  ? await openDatabase({ databaseUrl: scratch.url, poolSize: 1 })
  : await openDatabase({ pgliteDataDir: 'memory://' });
const { db } = handle;
const [backend] = await queryRows<{ pid: number }>(db, sql`select pg_backend_pid() as pid`);
/** CPU µs the database has used so far: its backend's on PostgreSQL, this process's on PGlite. */
const databaseCpu = () => {
  if (onPostgres) return cpuMicros(backend!.pid);
  const used = process.cpuUsage();
  return used.user + used.system;
};

const [user] = await queryRows<{ id: string }>(
  db,
  sql`insert into users (email) values ('bench@example.com') returning id`,
);
const owner = user!.id;
const wallet = walletOf('sandbox', owner);
const clearing = systemAccount('sandbox', 'provider_clearing');
const fees = systemAccount('sandbox', 'fees');
/** A ledger.post of `lines`, in its own transaction, under a new reference each time. */
const post = (lines: PostingLine[]) => () =>
  db.transaction((tx) =>
    ledger.post(tx, { environment: 'sandbox', kind: 'bench', reference: crypto.randomUUID(), lines }),
  );
const walletId = await ledger.accountId(db, wallet);
const clearingId = await ledger.accountId(db, { ...clearing, shard: 0 });
// The capture shape spends from the holds account, which may not go negative.
await post([
  { account: clearing, amount: -1_000_000_000_000n },
  { account: holdsOf('sandbox', owner), amount: 1_000_000_000_000n },
])();

const ONE_STATEMENT = statement(
  'benchGuardedPosting',
  `with moved as (
     update ledger_accounts a set balance = a.balance + v.amount
     from (values ($2::uuid, -100::bigint), ($3::uuid, 100::bigint)) as v(id, amount)
     where a.id = v.id
     returning a.id, a.balance, v.amount
   ),
   posting as (
     insert into ledger_postings (id, environment, kind, reference) values ($1::uuid, 'sandbox', 'bench', $1::text)
   )
   insert into ledger_entries (posting_id, account_id, amount, balance_after)
   select $1::uuid, id, amount, balance from moved`,
);

/**
 * The guard's work without a client around it: BATCH postings of two entries in one DO block (one
 * transaction, its checks at its commit), so the backend's CPU is nearly all insert and check.
 */
const BATCH = 100;
const SERVER_LOOP = sql.raw(`do $$
  declare p uuid;
  begin
    for i in 1..${BATCH} loop
      p := gen_random_uuid();
      insert into ledger_postings (id, environment, kind, reference) values (p, 'sandbox', 'bench', p::text);
      insert into ledger_entries (posting_id, account_id, amount, balance_after)
      values (p, '${clearingId}', -1, 0), (p, '${walletId}', 1, 0);
    end loop;
  end $$`);

/** Each shape: one run, and how many postings it writes. */
const allShapes: Record<string, { run: () => Promise<unknown>; postings: number }> = {
  'ledger.post, 2 lines': {
    run: post([
      { account: clearing, amount: -100n },
      { account: wallet, amount: 100n },
    ]),
    postings: 1,
  },
  'ledger.post, 3 lines': {
    run: post([
      { account: holdsOf('sandbox', owner), amount: -100n },
      { account: clearing, amount: 90n },
      { account: fees, amount: 10n },
    ]),
    postings: 1,
  },
  'one statement, 2 entries': {
    run: () => runStatement(db, ONE_STATEMENT, [crypto.randomUUID(), clearingId, walletId]),
    postings: 1,
  },
  [`in the database, ${BATCH} postings of 2 entries a transaction`]: {
    run: () => db.execute(SERVER_LOOP),
    postings: BATCH,
  },
};

const guard = (on: boolean) =>
  Promise.all(
    ['ledger_postings', 'ledger_entries'].map((table) =>
      db.execute(sql.raw(`alter table ${table} ${on ? 'enable' : 'disable'} trigger ${table}_balanced`)),
    ),
  );

/** Calls of the guard's function and its total time in ms, as PostgreSQL counted them. */
async function functionStats(): Promise<{ calls: number; ms: number }> {
  if (!onPostgres) return { calls: 0, ms: 0 };
  await db.execute(sql`select pg_stat_force_next_flush()`);
  // Flushed at the end of the transaction above; read in the next.
  const [row] = await queryRows<{ calls: string | null; ms: number | null }>(
    db,
    sql`select calls::text, self_time as ms from pg_stat_user_functions where funcname = 'ledger_check_posting_balanced'`,
  );
  return { calls: Number(row?.calls ?? 0), ms: row?.ms ?? 0 };
}

const samples = new Map<string, Array<{ cpu: number; wall: number }>>();
const functionTime = new Map<string, { calls: number; ms: number; postings: number }>();
const shapes = Object.fromEntries(Object.entries(allShapes).filter(([name]) => name.includes(values.only!)));
for (const { run, postings } of Object.values(shapes)) for (let i = 0; i < 100 / postings; i++) await run();
// Statistics, as autovacuum keeps them on a live database: without any, the planner takes the fresh
// ledger_entries for a large table and the check's plan for a wide one (twice its cost, measured).
await db.execute(sql`analyze ledger_entries, ledger_postings`);
for (let round = 0; round < rounds; round++) {
  for (const on of round % 2 ? [false, true] : [true, false]) {
    await guard(on);
    for (const [name, { run, postings }] of Object.entries(shapes)) {
      const before = await functionStats();
      const cpu = databaseCpu();
      const start = process.hrtime.bigint();
      // The loop is cheap per posting: more of them, so the CPU clock's 10 ms ticks add up to a figure.
      const runs = postings > 1 ? Math.ceil(Number(values['loop-postings']) / postings) : count;
      for (let i = 0; i < runs; i++) await run();
      const written = runs * postings;
      const wall = Number(process.hrtime.bigint() - start) / 1000 / written;
      const used = (databaseCpu() - cpu) / written;
      const after = await functionStats();
      const key = `${name}|${on}`;
      samples.set(key, [...(samples.get(key) ?? []), { cpu: used, wall }]);
      const sum = functionTime.get(key) ?? { calls: 0, ms: 0, postings: 0 };
      functionTime.set(key, {
        calls: sum.calls + after.calls - before.calls,
        ms: sum.ms + after.ms - before.ms,
        postings: sum.postings + written,
      });
    }
  }
}
await guard(true);

console.log(machineLine());
console.log(
  `${values.engine}: ${count} writes per shape per round (${values['loop-postings']} postings in the loop), ${rounds} interleaved rounds, medians\n`,
);
console.log(
  '| write | DB CPU µs/posting, guard off | on | difference | wall µs/posting, guard off | on | guard calls/posting | guard µs/call |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const name of Object.keys(shapes)) {
  const of = (on: boolean, figure: 'cpu' | 'wall') => median(samples.get(`${name}|${on}`)!.map((s) => s[figure]));
  const [cpuOff, cpuOn] = [of(false, 'cpu'), of(true, 'cpu')];
  const calls = functionTime.get(`${name}|true`)!;
  const perWrite = onPostgres ? (calls.calls / calls.postings).toFixed(1) : 'n/a';
  const perCall = calls.calls ? ((calls.ms * 1000) / calls.calls).toFixed(1) : 'n/a';
  const difference = `${(cpuOn - cpuOff).toFixed(0)} (${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)}%)`;
  console.log(
    `| ${name} | ${cpuOff.toFixed(0)} | ${cpuOn.toFixed(0)} | ${difference} | ${of(false, 'wall').toFixed(0)} | ${of(true, 'wall').toFixed(0)} | ${perWrite} | ${perCall} |`,
  );
}
await handle.close();
await scratch.drop();

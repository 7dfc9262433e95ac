/**
 * `npm run bench:relay-lag -- [rate] [seconds] [hold]`: commit → `seq` as the workers' relay loop
 * runs it (startRelay: hinted by recordEvent, its own connection), on a fresh PostgreSQL database
 * (DATABASE_URL's server, dropped after). Writers commit one event per transaction, evenly spaced at
 * `rate` per second; each event's lag runs from its commit returning to its stamped batch reaching
 * this process. `hold`: a session of another database keeps a transaction id open throughout (the
 * relay once waited for every open transaction of the cluster).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase, queryRows } from '../../src/db/client.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { onStampedBatch, startRelay } from '../../src/domain/events/relay.js';
import { loadAverage, maximum, percentile } from './harness/index.js';
import { benchArgs } from './harness/options.js';

const { positionals } = benchArgs({ allowPositionals: true, options: {} });
const rate = Number(positionals[0] ?? 200);
const seconds = Number(positionals[1] ?? 8);
const hold = positionals[2] === 'hold';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const name = `relay_lag_${process.pid}`;
const admin = new pg.Client({ connectionString: base.toString() });
await admin.connect();
await admin.query(`create database ${name}`);
const own = new URL(base);
own.pathname = `/${name}`;
let handle: Awaited<ReturnType<typeof openDatabase>> | undefined;
let holder: pg.Client | undefined;
try {
  handle = await openDatabase({ databaseUrl: own.toString(), poolSize: 20 });
  const db = handle.db;
  const [user] = await queryRows<{ id: string }>(
    db,
    sql`insert into users (email) values (${`lag-${randomUUID()}@example.test`}) returning id`,
  );
  if (hold) {
    holder = new pg.Client({ connectionString: base.toString() });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select pg_current_xact_id()');
  }
  // A batch can reach this process before the writer's own commit reply does (the relay's
  // connection saw the commit first): such an event counts as stamped with no lag.
  const committedAt = new Map<string, number>();
  const stampedAt = new Map<string, number>();
  onStampedBatch(db, (batch) => {
    const now = performance.now();
    for (const event of batch) stampedAt.set(event.id, now);
  });
  const unstamped = () => [...committedAt.keys()].filter((id) => !stampedAt.has(id)).length;
  let rounds = 0;
  const relay = startRelay(db, { onRound: () => rounds++ });
  const start = performance.now();
  const total = Math.round(rate * seconds);
  const writes: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0.5) await pause(wait);
    writes.push(
      (async () => {
        let id = '';
        await db.transaction(async (tx) => {
          const event = { type: 'bench.lag', userId: user!.id, environment: 'sandbox' as const, data: { i } };
          id = (await recordEvent(tx, event, new Date())).id;
        });
        committedAt.set(id, performance.now());
      })(),
    );
  }
  await Promise.all(writes);
  const deadline = performance.now() + 5000;
  while (unstamped() > 0 && performance.now() < deadline) await pause(20);
  await relay.stop();
  const lags = [...committedAt].flatMap(([id, at]) => {
    const stamped = stampedAt.get(id);
    return stamped === undefined ? [] : [Math.max(0, stamped - at)];
  });
  console.log(`${new Date().toISOString()}, load average ${loadAverage()}`);
  console.log(
    `${rate} events/s for ${seconds} s${hold ? ', another database holding a transaction id throughout' : ''}: ` +
      `${lags.length}/${total} stamped; commit → seq p50 ${percentile(lags, 50).toFixed(1)} ms, ` +
      `p99 ${percentile(lags, 99).toFixed(1)} ms, max ${maximum(lags).toFixed(1)} ms; ${rounds} relay rounds; ` +
      `still unstamped 5 s after the last commit: ${unstamped()}`,
  );
} finally {
  await holder?.query('rollback').catch(() => undefined);
  await holder?.end();
  await handle?.close();
  await admin.query(`drop database ${name} with (force)`);
  await admin.end();
}

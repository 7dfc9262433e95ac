/**
 * `npm run bench:money-wal`: what one gateway request of each money path writes to PostgreSQL's WAL,
 * by relation (tables and their indexes), read with pg_walinspect between two LSNs around single
 * requests (the relay's stamping included, as it runs in the server). On a fresh database, dropped
 * after; other databases' records are left out (matched by database oid), so a shared server's other
 * work does not count. Figures per request: WAL bytes, records, and full-page images.
 *
 *   npm run bench:money-wal -- [--requests 20]
 */
import { benchArgs } from './harness/options.js';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startServer } from './harness/index.js';

const { values } = benchArgs({ options: { requests: { type: 'string', default: '20' } } });
const requests = Number(values.requests);
const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const dbName = `money_wal_${process.pid}`;
const admin = new pg.Client({ connectionString: base.toString() });
await admin.connect();
await admin.query(`create database ${dbName}`);
const own = new URL(base);
own.pathname = `/${dbName}`;
const stats = new pg.Client({ connectionString: own.toString() });
await stats.connect();
await stats.query('create extension if not exists pg_walinspect');
const server = await startServer<{ pid: number; port: number; tenants: Array<{ id: string; key: string }> }>(
  'scripts/bench/money-server.ts',
  [],
  { ...process.env, DATABASE_URL: own.toString(), LOG_LEVEL: 'warn', BENCH_TENANTS: '4' },
  600_000,
);
try {
  const { tenants } = server.ready;
  const url = `http://127.0.0.1:${server.ready.port}`;
  const post = async (key: string, path: string, body: unknown) => {
    const response = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': randomUUID() },
      body: JSON.stringify(body),
    });
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  };
  const paths: Record<string, (i: number) => Promise<void>> = {
    'P2P transfer': (i) =>
      post(tenants[i % 4]!.key, '/api/v1/wallet/transfer', { amount: 1, recipient: tenants[(i + 1) % 4]!.id }),
    airtime: (i) =>
      post(tenants[i % 4]!.key, '/api/v1/bills/buy-airtime', {
        phoneNumber: '08031234567',
        biller: 'mtn',
        amount: 100,
      }),
    deposit: (i) => post(tenants[i % 4]!.key, '/api/v1/wallet/deposits/bank-transfer', { amount: 100 }),
    payout: (i) =>
      post(tenants[i % 4]!.key, '/api/v1/wallet/withdraw', {
        amount: 100,
        bankCode: '044',
        accountNumber: '0690000040',
      }),
  };
  const { rows: dbRows } = await stats.query('select oid from pg_database where datname = current_database()');
  const dbOid = String(dbRows[0].oid);
  const lsn = async () => (await stats.query('select pg_current_wal_lsn()::text as l')).rows[0].l as string;
  for (const [name, send] of Object.entries(paths)) {
    for (let i = 0; i < 5; i++) await send(i); // warm: catalogue, account ids, prepared statements
    await sleep(500);
    const start = await lsn();
    for (let i = 0; i < requests; i++) await send(i);
    await sleep(500); // the relay stamps the events
    const end = await lsn();
    const { rows } = await stats.query(
      `select coalesce(c.relname, r.resource_manager) as what, count(*)::int as records, sum(r.record_length)::int as bytes,
         sum(r.fpi_length)::int as fpi
       from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) r
       left join pg_class c on c.relfilenode::text = substring(r.block_ref from 'rel \\d+/\\d+/(\\d+)')
       where substring(r.block_ref from 'rel \\d+/(\\d+)/') = $3
       group by 1 order by 3 desc`,
      [start, end, dbOid],
    );
    const total = rows.reduce((s, r) => s + r.bytes, 0);
    console.log(
      `\n${name}: ${Math.round(total / requests)} WAL B/request (this database's pages; commit records not counted)`,
    );
    for (const r of rows)
      console.log(
        `  ${String(r.what).padEnd(40)} ${(r.records / requests).toFixed(1).padStart(6)} records ${String(Math.round(r.bytes / requests)).padStart(6)} B  (full pages ${Math.round(r.fpi / requests)} B)`,
      );
  }
} finally {
  await server.stop();
  await stats.end();
  await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
  await admin.end();
}

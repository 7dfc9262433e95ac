/**
 * npm run bench:bills [-- --db pglite|postgres --duration 10 --records 100000]
 *
 * GET /api/v1/bills/records for one user owning 100,000 records (and another user's 100,000):
 * throughput and p50/p99 per query shape, server on CPU 0 and autocannon on CPU 1.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchDatabase } from './database.js';
import { onLoadCore, spawnServer } from './harness/pinning.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'pglite' },
    duration: { type: 'string', default: '10' },
    records: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '16' },
  },
});

const QUERIES: Array<[string, string]> = [
  ['newest 20 (default sort)', ''],
  ['type + status', '?type=AIRTIME&status=SUCCESS'],
  ['amount range, sorted by amount', '?minAmount=1000&maxAmount=2000&sortBy=amount&sortOrder=ASC'],
  [
    'date range (one day)',
    `?startDate=${new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10)}&endDate=${new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10)}`,
  ],
  ['biller name, partial', '?billerName=airtel'],
  ['search in reference / txRef', '?search=BENCH-4242'],
  ['page 100 of 20', '?page=100'],
  ['limit 100, oldest first', '?limit=100&sortOrder=ASC'],
];

await onLoadCore(async () => {
  const database = await benchDatabase(values.db!);
  const server = spawnServer('scripts/bench/bills-server.ts', [], {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: '',
    BENCH_RECORDS: values.records!,
  });
  const ready = await new Promise<{ port: number; key: string }>((resolve) =>
    createInterface({ input: server.stdout! }).on('line', (l) => l.startsWith('{"ready"') && resolve(JSON.parse(l))),
  );
  const rows: string[] = [];
  for (const [name, query] of QUERIES) {
    const url = `http://127.0.0.1:${ready.port}/api/v1/bills/records${query}`;
    const options = { url, headers: { 'x-api-key': ready.key }, connections: Number(values.connections) };
    await autocannon({ ...options, duration: 2 });
    const result = await autocannon({ ...options, duration: Number(values.duration) });
    rows.push(
      `| ${name} | \`${query || '(none)'}\` | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx + result.errors} |`,
    );
    console.log(rows.at(-1));
  }
  console.log(
    `\nDatabase: ${values.db}; ${values.records} records per user, 2 users.\n\n| query | parameters | req/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n${rows.join('\n')}`,
  );
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
  await database.drop();
  process.exit(0);
});

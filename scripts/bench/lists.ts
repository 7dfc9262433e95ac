/**
 * npm run bench:lists [-- --db postgres|pglite --seconds 3 --sizes 100,10000,100000
 *                        --population 2000000 --users 1000 --matrix]
 *
 * `--population` and `--users`: the table holds that many rows of each list in all, over that many
 * users (the measured ones included). `--matrix`: beside the filters, every sort in both orders,
 * the first and last page at limit 20 and 100, and a broad search (a term in one reference of nine)
 * beside the selective one.
 *
 * The seed's paginated lists at 100 / 10,000 / 100,000 records for one user: GET /api/v1/bills/records
 * and GET /api/v1/transactions, newest page, last page, every filter and the search, each driven
 * for `seconds` by one connection (one request at a time: the latency a partner's page load sees,
 * not a queueing figure), reporting p50/p99, the time per request spent waiting on SQL (the
 * database's share, apart from HTTP and GraphQL), statements per request and the server's CPU µs
 * per request. The server
 * (scripts/bench/lists-server.ts) runs on CPU 0, this process on CPU 1.
 */
import { benchArgs } from './harness/options.js';
import { benchDatabase } from './database.js';
import { cpuMicros, httpTarget, machineLine, onLoadCore, startServer } from './harness/index.js';

const { values } = benchArgs({
  options: {
    db: { type: 'string', default: process.env.DATABASE_URL ? 'postgres' : 'pglite' },
    seconds: { type: 'string', default: '3' },
    sizes: { type: 'string', default: '100,10000,100000' },
    only: { type: 'string', default: '' },
    population: { type: 'string', default: '0' },
    users: { type: 'string', default: '0' },
    matrix: { type: 'boolean', default: false },
  },
});

const day = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
/** [list, name, query string]; `LAST` is replaced by the last page number. */
const QUERIES: Array<[string, string, string]> = [
  ['bills', 'newest page', ''],
  ['bills', 'last page', '?page=LAST'],
  ['bills', 'middle page, limit 100', '?page=MIDDLE&limit=100'],
  ['bills', 'type', '?type=AIRTIME'],
  ['bills', 'status', '?status=FAILED'],
  ['bills', 'type + status, last page', '?type=CABLEBILLS&status=PENDING&page=LAST'],
  ['bills', 'biller code', '?billerCode=BIL119'],
  ['bills', 'biller name, partial', '?billerName=airtel'],
  ['bills', 'customer', '?customer=08030004242'],
  ['bills', 'date range (one day)', `?startDate=${day}&endDate=${day}`],
  ['bills', 'amount range by amount', '?minAmount=1000&maxAmount=2000&sortBy=amount&sortOrder=ASC'],
  ['bills', 'sorted by updatedAt, last page', '?sortBy=updatedAt&page=LAST'],
  ['bills', 'search reference / txRef', '?search=BENCH-4242'],
  ['transactions', 'newest page', ''],
  ['transactions', 'last page', '?page=LAST'],
  ['transactions', 'type + status', '?type=TRANSFER_OUT&status=FAILED'],
  ['transactions', 'date range (one day)', `?from=${day}&to=${day}`],
  ['transactions', 'amount range', '?minAmount=1000&maxAmount=2000'],
  ['transactions', 'search reference', '?search=BENCH-4242'],
];
/** The rest of the matrix: sorts, page sizes and ends, and a broad search. */
const MATRIX: Array<[string, string, string]> = [
  ...(['createdAt', 'updatedAt', 'amount'] as const).flatMap((sortBy) =>
    (['DESC', 'ASC'] as const).flatMap((order) =>
      (['', 'LAST'] as const).map((end): [string, string, string] => [
        'bills',
        `sorted by ${sortBy} ${order}, ${end ? 'last' : 'first'} page`,
        `?sortBy=${sortBy}&sortOrder=${order}${end ? '&page=LAST' : ''}`,
      ]),
    ),
  ),
  ['bills', 'first page, limit 100', '?limit=100'],
  ['bills', 'last page, limit 100', '?page=LAST&limit=100'],
  ['bills', 'search, broad (1 in 9), first page', '?search=BENCH-1'],
  ['bills', 'search, broad (1 in 9), last page', '?search=BENCH-1&page=LAST'],
  ['bills', 'search, selective, limit 100', '?search=BENCH-4242&limit=100'],
  ['transactions', 'first page, limit 100', '?limit=100'],
  ['transactions', 'last page, limit 100', '?page=LAST&limit=100'],
  ['transactions', 'status, last page', '?status=PENDING&page=LAST'],
  ['transactions', 'search, broad (1 in 9), first page', '?search=BENCH-1'],
  ['transactions', 'search, broad (1 in 9), last page', '?search=BENCH-1&page=LAST'],
];
const PATHS: Record<string, string> = { bills: '/api/v1/bills/records', transactions: '/api/v1/transactions' };

await onLoadCore(async () => {
  const database = await benchDatabase(values.db!);
  const server = await startServer<{ pid: number; port: number; keys: Record<string, string> }>(
    'scripts/bench/lists-server.ts',
    [],
    {
      ...process.env,
      DATABASE_URL: database.url,
      REDIS_URL: '',
      BENCH_SIZES: values.sizes!,
      BENCH_POPULATION: values.population!,
      BENCH_USERS: values.users!,
    },
    900_000,
  );
  const rows: string[] = [];
  try {
    for (const size of values.sizes!.split(',')) {
      const key = server.ready.keys[size]!;
      for (const [list, name, query] of values.matrix ? [...QUERIES, ...MATRIX] : QUERIES) {
        if (values.only && !`${list} ${name}`.includes(values.only)) continue;
        const url = await resolvePages(`http://127.0.0.1:${server.ready.port}${PATHS[list]}`, query, key);
        const target = httpTarget({ name, pid: server.pid, url, headers: { 'x-api-key': key }, connections: 1 });
        await target.drive(1);
        const sqlAt = `http://127.0.0.1:${server.ready.port}/bench/sql`;
        await fetch(sqlAt);
        const before = cpuMicros(server.pid);
        const load = await target.drive(Number(values.seconds));
        const cpu = Math.round((cpuMicros(server.pid) - before) / Math.max(1, load.requests));
        const spent = (await (await fetch(sqlAt)).json()) as { sqlMs: number; statements: number };
        const sqlPerRequest = (spent.sqlMs / Math.max(1, load.requests)).toFixed(1);
        const statementsPerRequest = (spent.statements / Math.max(1, load.requests)).toFixed(1);
        const row = `| ${Number(size).toLocaleString('en')} | ${list} | ${name} | \`${url.slice(url.indexOf('?')).replace(/^[^?].*/, '') || '(none)'}\` | ${load.p50} | ${load.p99} | ${sqlPerRequest} | ${statementsPerRequest} | ${cpu} | ${load.errors} |`;
        rows.push(row);
        console.log(row);
      }
    }
  } finally {
    await server.stop();
    await database.drop();
  }
  console.log(
    `\nMeasured ${machineLine()}; database ${values.db}; ${values.seconds} s per query, one connection` +
      (Number(values.population) > 0
        ? `; ${Number(values.population).toLocaleString('en')} rows of each list over ${values.users} users`
        : '') +
      '.\n\n' +
      '| records | list | query | parameters | p50 ms | p99 ms | SQL ms/req | statements/req | gateway CPU µs/req | errors |\n|---|---|---|---|---|---|---|---|---|---|\n' +
      rows.join('\n'),
  );
  process.exit(0);
});

/** Replaces LAST / MIDDLE with real page numbers, from the list's own exact total. */
async function resolvePages(base: string, query: string, key: string): Promise<string> {
  if (!/LAST|MIDDLE/.test(query)) return `${base}${query}`;
  const limit = Number(query.match(/limit=(\d+)/)?.[1] ?? 20);
  const probe = query
    .replace(/&?(page|limit)=[A-Z0-9]+/g, '')
    .replace(/^\?&/, '?')
    .replace(/^\?$/, '');
  const response = await fetch(`${base}${probe}${probe.includes('?') ? '&' : '?'}limit=${limit}`, {
    headers: { 'x-api-key': key },
  });
  const { data } = (await response.json()) as { data: { totalPages: number } };
  const last = Math.max(1, data.totalPages);
  return `${base}${query.replace('LAST', String(last)).replace('MIDDLE', String(Math.max(1, Math.floor(last / 2))))}`;
}

/**
 * npm run bench:lists [-- --db postgres|pglite --seconds 3 --sizes 100,10000,100000
 *                        --population 2000000 --users 1000 --matrix --keep --database <url>]
 *
 * The seed's paginated lists, GET /api/v1/bills/records and GET /api/v1/transactions, for users
 * holding 100 / 10,000 / 100,000 records of each: every filter of each list (a selective and a broad
 * search among them) and every sort of bill records in both orders, each at its first and its last
 * page (numbered from the list's own exact total, printed beside it). `--matrix` takes every case at
 * page size 20 and 100, else at 20. Each case is driven for `seconds` by one connection (one request
 * at a time: the latency a partner's page load sees, not a queueing figure), reporting p50/p99, the
 * time per request spent waiting on SQL (the database's share, apart from HTTP and GraphQL),
 * statements per request and the server's CPU µs per request. The server
 * (scripts/bench/lists-server.ts) runs on CPU 0, this process on CPU 1.
 *
 * `--population` and `--users`: the tables hold that many rows of each list in all, over that many
 * users (the measured ones included), interleaved in time order (scripts/bench/list-population.ts).
 * PostgreSQL runs get a database of their own, dropped after the run; `--keep` keeps it and prints
 * its URL, and `--database <url>` measures a kept one again without seeding.
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
    keep: { type: 'boolean', default: false },
    database: { type: 'string', default: '' },
    plans: { type: 'boolean', default: false },
  },
});

const day = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
/** Every filter of each list, by name: [name, query parameters]. */
const FILTERS: Record<string, Array<[string, string]>> = {
  bills: [
    ['no filter', ''],
    ['type', 'type=AIRTIME'],
    ['status', 'status=FAILED'],
    ['type + status', 'type=CABLEBILLS&status=PENDING'],
    ['biller name, partial', 'billerName=airtel'],
    ['biller code', 'billerCode=BIL119'],
    ['customer', 'customer=08030004242'],
    ['date range (one day)', `startDate=${day}&endDate=${day}`],
    ['amount range', 'minAmount=1000&maxAmount=2000'],
    ['search, selective', 'search=BENCH-4242'],
    ['search, broad (1 in 9)', 'search=BENCH-1'],
  ],
  transactions: [
    ['no filter', ''],
    ['type', 'type=DEPOSIT'],
    ['status', 'status=PENDING'],
    ['type + status', 'type=TRANSFER_OUT&status=FAILED'],
    ['date range (one day)', `from=${day}&to=${day}`],
    ['amount range', 'minAmount=1000&maxAmount=2000'],
    ['search, selective', 'search=BENCH-4242'],
    ['search, broad (1 in 9)', 'search=BENCH-1'],
  ],
};
/** The bill records' sorts beside the default (createdAt DESC); wallet transactions have one order. */
const SORTS: Array<[string, string]> = (['createdAt', 'updatedAt', 'amount'] as const)
  .flatMap((by) =>
    (['DESC', 'ASC'] as const).map((order): [string, string] => [`${by} ${order}`, `sortBy=${by}&sortOrder=${order}`]),
  )
  .filter(([name]) => name !== 'createdAt DESC');

interface Case {
  list: string;
  name: string;
  /** The query's own parameters, without page and limit. */
  query: string;
  end: 'first' | 'last';
  limit: number;
}

/**
 * The cases: every filter of each list and every sort of bill records, each at its first and last
 * page; `--matrix` takes each at page size 20 and 100, else at 20 only.
 */
function cases(matrix: boolean): Case[] {
  const limits = matrix ? [20, 100] : [20];
  const queries = [
    ...Object.entries(FILTERS).flatMap(([list, filters]) => filters.map(([name, query]) => ({ list, name, query }))),
    ...SORTS.map(([name, query]) => ({ list: 'bills', name: `sorted by ${name}`, query })),
  ];
  return queries.flatMap((q) =>
    (['first', 'last'] as const).flatMap((end) => limits.map((limit): Case => ({ ...q, end, limit }))),
  );
}
const PATHS: Record<string, string> = { bills: '/api/v1/bills/records', transactions: '/api/v1/transactions' };

await onLoadCore(async () => {
  const database = values.database
    ? { url: values.database, drop: async () => undefined }
    : await benchDatabase(values.db!);
  // A server that fails to start (its seed, its migrations) must not leave the run's database behind.
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
  ).catch(async (error: unknown) => {
    if (!values.keep && !values.database) await database.drop();
    throw error;
  });
  const rows: string[] = [];
  const planRows: string[] = [];
  try {
    for (const size of values.sizes!.split(',')) {
      const key = server.ready.keys[size]!;
      for (const c of cases(values.matrix!)) {
        if (values.only && !`${c.list} ${c.name}`.includes(values.only)) continue;
        const { url, total } = await pageUrl(`http://127.0.0.1:${server.ready.port}${PATHS[c.list]}`, c, key);
        const target = httpTarget({
          name: c.name,
          pid: server.pid,
          url,
          headers: { 'x-api-key': key },
          connections: 1,
        });
        // Before the drives: a request of a drive can still be in flight when it ends.
        if (values.plans)
          planRows.push(await plansOf(server.ready.port, url, key, `${c.list} | ${c.name} | ${c.limit} | ${c.end}`));
        await target.drive(1);
        const sqlAt = `http://127.0.0.1:${server.ready.port}/bench/sql`;
        await fetch(sqlAt);
        const before = cpuMicros(server.pid);
        const load = await target.drive(Number(values.seconds));
        const cpu = Math.round((cpuMicros(server.pid) - before) / Math.max(1, load.requests));
        const spent = (await (await fetch(sqlAt)).json()) as { sqlMs: number; statements: number };
        const sqlPerRequest = (spent.sqlMs / Math.max(1, load.requests)).toFixed(1);
        const statementsPerRequest = (spent.statements / Math.max(1, load.requests)).toFixed(1);
        const page = url.match(/[?&]page=(\d+)/)?.[1] ?? '1';
        const row = `| ${Number(size).toLocaleString('en')} | ${c.list} | ${c.name} | ${c.query ? `\`${c.query}\`` : ''} | ${c.limit} | ${c.end} (${page}) | ${total.toLocaleString('en')} | ${load.p50} | ${load.p99} | ${sqlPerRequest} | ${statementsPerRequest} | ${cpu} | ${load.errors} |`;
        rows.push(row);
        console.log(row);
      }
    }
  } finally {
    await server.stop();
    if (values.keep || values.database) console.error(`kept the bench database: ${database.url}`);
    else await database.drop();
  }
  console.log(
    `\nMeasured ${machineLine()}; database ${values.db}; ${values.seconds} s per query, one connection` +
      (Number(values.population) > 0
        ? `; ${Number(values.population).toLocaleString('en')} rows of each list over ${values.users} users`
        : '') +
      '.\n\n' +
      '| records | list | query | parameters | limit | page | total | p50 ms | p99 ms | SQL ms/req | statements/req | gateway CPU µs/req | errors |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
      rows.join('\n') +
      (planRows.length
        ? '\n\nPlans (EXPLAIN ANALYZE of each statement the request sent, in order):\n\n' +
          '| list | query | limit | page | statements: scans, index entries read → kept, heap fetches; buffers |\n|---|---|---|---|---|\n' +
          planRows.join('\n')
        : ''),
  );
  process.exit(0);
});

/** The case's URL, its last page numbered from the list's own exact total, and that total. */
async function pageUrl(base: string, c: Case, key: string): Promise<{ url: string; total: number }> {
  const query = `${base}?${c.query ? `${c.query}&` : ''}limit=${c.limit}`;
  const response = await fetch(query, { headers: { 'x-api-key': key } });
  const { data } = (await response.json()) as { data: { total: number; totalPages: number } };
  const page = c.end === 'last' ? Math.max(1, data.totalPages) : 1;
  return { url: page === 1 ? query : `${query}&page=${page}`, total: data.total };
}

/** One table row: the plans of the statements one request of `url` sends (PostgreSQL only). */
async function plansOf(port: number, url: string, key: string, label: string): Promise<string> {
  await fetch(`http://127.0.0.1:${port}/bench/plans/start`);
  await fetch(url, { headers: { 'x-api-key': key } });
  const { plans } = (await (await fetch(`http://127.0.0.1:${port}/bench/plans`)).json()) as { plans: string[] };
  return `| ${label} | ${plans.map((p, i) => `${i + 1}. ${p}`).join('<br>')} |`;
}

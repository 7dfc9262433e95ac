/**
 * npm run bench [-- --duration 15 --warmup 10 --connections 32 --db pglite|postgres|both]
 *
 * Starts scripts/bench/server.ts pinned to CPU 0 and drives it with autocannon from this process
 * pinned to CPU 1, on embedded PGlite and (when DATABASE_URL is set) on PostgreSQL in a database of
 * its own. Every target is warmed up first (Apollo needs it), then measured in `rounds` interleaved
 * rounds (so no target is favoured by running first or last), reporting the median round: req/s,
 * p50/p99 latency, server CPU µs per request (from /proc) and RSS. Results go to docs/benchmarks.md
 * between the bench markers.
 *
 * Then the other suites (`--suites http,fanout,webhooks,bills,quotes` picks them): subscription fan-out
 * against a plain graphql-ws server, webhook delivery throughput and the bill records list at
 * 100,000 records and swap quote latency, each its own script (`npm run bench:fanout` and so on), on PostgreSQL when
 * DATABASE_URL is set.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { benchDatabase } from './database.js';
import { canPin, onLoadCore, spawnServer } from './harness/pinning.js';
import { httpTarget, measureInterleaved } from './harness/index.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    db: { type: 'string', default: 'both' },
    'no-write': { type: 'boolean', default: false },
    /** Which benchmarks: http (the request pipeline), fanout, webhooks, bills. */
    suites: { type: 'string', default: 'http,fanout,webhooks,bills,quotes' },
  },
});

await onLoadCore(main);

interface Target {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  headers: Record<string, string>;
}

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  cpuMicrosPerRequest: number;
  rssMiB: number;
  errors: number;
}

async function main(): Promise<void> {
  const suites = new Set(values.suites!.split(',').map((x) => x.trim()));
  if (suites.has('http')) await benchHttp();
  // The other suites are scripts of their own (also runnable alone); each records what it measures.
  const database = process.env.DATABASE_URL ? 'postgres' : 'pglite';
  const others: Array<[string, string, string[]]> = [
    ['fanout', 'scripts/bench/fanout.ts', ['--db', database]],
    ['webhooks', 'scripts/bench/webhooks.ts', []],
    ['bills', 'scripts/bench/bills.ts', ['--db', database, '--duration', '5']],
    ['quotes', 'scripts/bench/quotes.ts', ['--db', database, '--duration', '5']],
  ];
  for (const [name, script, args] of others) {
    if (!suites.has(name)) continue;
    console.log(`\n== ${name}: ${script} ${args.join(' ')}`);
    spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { stdio: 'inherit', env: process.env });
  }
}

async function benchHttp(): Promise<void> {
  const duration = Number(values.duration);
  const rounds = Number(values.rounds);
  const warmup = Number(values.warmup);
  const connections = Number(values.connections);
  const databases = values.db === 'both' ? ['pglite', ...(process.env.DATABASE_URL ? ['postgres'] : [])] : [values.db!];
  const sections: string[] = [];
  for (const db of databases) {
    console.log(`\n== ${db}`);
    const results = await benchOn(db, { duration, warmup, connections, rounds });
    sections.push(render(db, results));
  }
  const header = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}.`,
    `Command: \`npm run bench -- --duration ${duration} --rounds ${rounds} --warmup ${warmup} --connections ${connections}\`` +
      (process.env.DATABASE_URL ? ' with `DATABASE_URL` set' : '') +
      '.',
    canPin
      ? 'Server pinned to CPU 0, load generator (autocannon) to CPU 1.'
      : 'taskset unavailable: server and load generator share CPUs.',
  ].join('\n');
  const block = `${header}\n\n${sections.join('\n\n')}`;
  console.log(`\n${block}`);
  if (!values['no-write']) writeResults(block);
}

async function benchOn(
  db: string,
  options: { duration: number; warmup: number; connections: number; rounds: number },
): Promise<Measured[]> {
  const { url: databaseUrl, drop: dropDatabase } = await benchDatabase(db);
  const server = spawnServer('scripts/bench/server.ts', [], {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: '',
    NODE_ENV: 'production',
    GRAPHQL_INTROSPECTION: 'true',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  });
  const ready = await new Promise<{ pid: number; gateway: number; bareApollo: number; key: string }>(
    (resolve, reject) => {
      const lines = createInterface({ input: server.stdout! });
      lines.on('line', (line) => {
        if (line.startsWith('{"ready"')) resolve(JSON.parse(line));
      });
      server.on('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    },
  );
  const auth = { 'x-api-key': ready.key };
  const query = JSON.stringify({ query: '{ me { id email name firstName lastName } }' });
  const json = { ...auth, 'content-type': 'application/json' };
  const targets: Target[] = [
    {
      name: 'raw Fastify route (same auth + user lookup)',
      url: `http://127.0.0.1:${ready.gateway}/bench/raw/me`,
      method: 'GET',
      headers: auth,
    },
    {
      name: 'REST GET /api/v1/user/me',
      url: `http://127.0.0.1:${ready.gateway}/api/v1/user/me`,
      method: 'GET',
      headers: auth,
    },
    {
      name: 'bare Apollo Server on Fastify, `me`',
      url: `http://127.0.0.1:${ready.bareApollo}/graphql`,
      method: 'POST',
      body: query,
      headers: json,
    },
    {
      name: 'gateway POST /graphql, `me`',
      url: `http://127.0.0.1:${ready.gateway}/graphql`,
      method: 'POST',
      body: query,
      headers: json,
    },
  ];
  try {
    const measured = await measureInterleaved(
      targets.map((t) =>
        httpTarget({
          name: t.name,
          pid: ready.pid,
          url: t.url,
          method: t.method,
          headers: t.headers,
          ...(t.body ? { body: t.body } : {}),
          connections: options.connections,
        }),
      ),
      { warmupSeconds: options.warmup, roundSeconds: options.duration, rounds: options.rounds },
    );
    return measured.map((m) => ({ ...m, rssMiB: m.rssMiB }));
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.on('exit', resolve));
    await dropDatabase();
  }
}

function render(db: string, results: Measured[]): string {
  const rows = results.map(
    (r) => `| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.cpuMicrosPerRequest} | ${r.rssMiB} | ${r.errors} |`,
  );
  const [raw, rest, bare, gateway] = results;
  const ratios = [
    `- REST / raw route throughput: **${(rest!.rps / raw!.rps).toFixed(2)}×** (target ≥ 0.80)`,
    `- gateway /graphql CPU per request vs bare Apollo: **${((gateway!.cpuMicrosPerRequest / bare!.cpuMicrosPerRequest - 1) * 100).toFixed(1)} %** more (target ≤ 15 %)`,
  ];
  return [
    `### ${db === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded)'}`,
    '',
    '| target | req/s | p50 ms | p99 ms | CPU µs/req | RSS MiB | errors |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...ratios,
  ].join('\n');
}

function writeResults(block: string): void {
  const path = 'docs/benchmarks.md';
  const text = readFileSync(path, 'utf8');
  const start = '<!-- bench:start -->';
  const end = '<!-- bench:end -->';
  const before = text.slice(0, text.indexOf(start) + start.length);
  const after = text.slice(text.indexOf(end));
  writeFileSync(path, `${before}\n${block}\n${after}`);
  console.log(`\nWrote ${path}`);
}

/**
 * npm run bench [-- --round 10 --rounds 3 --warmup 5 --connections 32 --write]
 *
 * The gateway against standalone peers, each its own process pinned to CPU 0 with autocannon on
 * CPU 1, over the gateway's own 20-field `User` and the same PostgreSQL rows (a fresh database on
 * DATABASE_URL's server, migrated and seeded by the gateway process):
 *   - raw Fastify doing GET /api/v1/user/me's mandatory work by hand (scripts/bench/peers/raw-fastify.ts),
 *   - Sofa, Mercurius with graphql-jit, bare Apollo Server 5 on Fastify (scripts/bench/peers/),
 *   - the gateway's REST route and /graphql on the same 20 fields, its home-screen query and a
 *     page of 20 bill records.
 * Every process does the same mandatory work per request (key lookup cached 1 s, one rate-limit
 * count in memory, one log line at the default level, `x-request-id`). Interleaved rounds, medians
 * (scripts/bench/harness). `--write` puts the result between the markers in docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchDatabase } from './database.js';
import { BILL_PAGE, HOME_SCREEN, ME_QUERY } from './documents.js';
import {
  httpTarget,
  type Measured,
  machineLine,
  measureInterleaved,
  onLoadCore,
  resultTable,
  roundFlags,
  roundOptions,
  type Started,
  startServer,
} from './harness/index.js';

const { values } = parseArgs({
  options: {
    ...roundFlags,
    connections: { type: 'string', default: '32' },
    write: { type: 'boolean', default: false },
  },
});

await onLoadCore(main);

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('npm run bench needs DATABASE_URL: the peers read the same rows');
  const rounds = roundOptions(values);
  const database = await benchDatabase('postgres');
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: '',
    NODE_ENV: 'production',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  };
  const servers: Array<Started<{ pid: number; port: number }>> = [];
  try {
    const gateway = await startServer<{ pid: number; port: number; key: string; statements: Record<string, number> }>(
      'scripts/bench/server.ts',
      [],
      env,
    );
    servers.push(gateway);
    const peer = async (script: string) => {
      const started = await startServer<{ pid: number; port: number }>(`scripts/bench/peers/${script}`, [], env);
      servers.push(started);
      return started;
    };
    const [raw, sofa, mercurius, apollo] = [
      await peer('raw-fastify.ts'),
      await peer('sofa.ts'),
      await peer('mercurius.ts'),
      await peer('apollo.ts'),
    ];
    const key = { 'x-api-key': gateway.ready.key };
    const json = { ...key, 'content-type': 'application/json' };
    const at = (s: Started<{ pid: number; port: number }>, path: string) => `http://127.0.0.1:${s.ready.port}${path}`;
    const connections = Number(values.connections);
    const get = (name: string, s: Started<{ pid: number; port: number }>, path: string, peerName?: string) =>
      httpTarget({
        name,
        pid: s.pid,
        url: at(s, path),
        headers: key,
        connections,
        ...(peerName ? { peer: peerName } : {}),
      });
    const post = (name: string, s: Started<{ pid: number; port: number }>, query: string, peerName?: string) =>
      httpTarget({
        name,
        pid: s.pid,
        url: at(s, '/graphql'),
        method: 'POST',
        headers: json,
        body: JSON.stringify({ query }),
        connections,
        ...(peerName ? { peer: peerName } : {}),
      });
    const RAW = 'raw Fastify, GET /api/v1/user/me';
    const APOLLO = 'bare Apollo Server 5, `me` (20 fields)';
    const BILLS = 'gateway /graphql, 20 bill records';
    const targets = [
      get(RAW, raw, '/api/v1/user/me'),
      get('gateway REST GET /api/v1/user/me', gateway, '/api/v1/user/me', RAW),
      get('Sofa, GET /api/me', sofa, '/api/me', RAW),
      post(APOLLO, apollo, ME_QUERY),
      post('Mercurius + graphql-jit, `me` (20 fields)', mercurius, ME_QUERY, APOLLO),
      post('gateway /graphql, `me` (20 fields)', gateway, ME_QUERY, APOLLO),
      post(BILLS, gateway, BILL_PAGE),
      post('gateway /graphql, home screen', gateway, HOME_SCREEN, BILLS),
    ];
    const results = await measureInterleaved(targets, rounds);
    const block = render(results, gateway.ready.statements, rounds.note);
    console.log(`\n${block}`);
    if (values.write) writeResults(block);
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await database.drop();
  }
  process.exit(0);
}

function render(results: Measured[], statements: Record<string, number>, note: string): string {
  const by = (prefix: string) => results.find((r) => r.name.startsWith(prefix))!;
  const ratio = (a: Measured, b: Measured) => (a.cpuMicrosPerRequest / b.cpuMicrosPerRequest).toFixed(2);
  const rest = by('gateway REST');
  const graphql = by('gateway /graphql, `me`');
  return [
    `Measured ${machineLine()}.`,
    `Command: \`npm run bench -- --round ${values.round} --rounds ${values.rounds} --warmup ${values.warmup} --connections ${values.connections}\` with \`DATABASE_URL\` set; ${note}.`,
    '',
    resultTable(results),
    '',
    `- gateway REST / raw Fastify, CPU per request: **${ratio(rest, by('raw Fastify'))}×** (goal ≤ 1.25×); / Sofa: ${ratio(rest, by('Sofa'))}×`,
    `- gateway /graphql \`me\` / bare Apollo: **${ratio(graphql, by('bare Apollo'))}×** (goal ≤ 1.15×); / Mercurius: ${ratio(graphql, by('Mercurius'))}×`,
    `- home screen / 20 bill records, CPU per request: ${ratio(by('gateway /graphql, home'), by('gateway /graphql, 20 bill'))}×`,
    `- SQL statements per request (caches cold): ${Object.entries(statements)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ')}`,
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

/**
 * npm run bench [-- --round 10 --rounds 3 --warmup 5 --connections 32 --write]
 *
 * The gateway against standalone peers, each its own process pinned to CPU 0 with autocannon on
 * CPU 1, over the gateway's own 20-field `User` and the same PostgreSQL rows (a fresh database on
 * DATABASE_URL's server, migrated and seeded by the gateway process):
 *   - raw Fastify doing GET /api/v1/user/me's mandatory work by hand (scripts/bench/peers/raw-fastify.ts),
 *   - Sofa, Mercurius with graphql-jit, bare Apollo Server 5 on Fastify (scripts/bench/peers/), and
 *     bare Apollo over the gateway's own resolvers, services and loaders for the home screen
 *     (`apollo.ts --graph`),
 *   - the gateway's REST route and /graphql on the same 20 fields, its home-screen query and a
 *     page of 20 bill records,
 *   - the REST route again at LOG_LEVEL=warn, so the cost of the default level (one line per
 *     request) is a ratio of the same run: on the same gateway process, its level switched to warn
 *     for those rounds only, and on a second process started at warn. The same process is the
 *     measure of the line; the second one also differs in what it has served (only this route,
 *     where the first serves the GraphQL targets too, with their heap, code and call sites),
 *   - the REST route again with the dashboard's request log not recording, on the same process
 *     switched for those rounds only: what keeping a key's last requests in memory costs,
 *   - a facade (GATEWAY_MODE=facade, scripts/bench/facade-server.ts) in front of the gateway: REST
 *     `GET /api/v1/user/me` passed through and /graphql `me`, each beside the same request to the
 *     gateway directly; then the latency the facade adds, at a steady `--facade-rate` below
 *     saturation (scripts/bench/facade-latency.ts).
 * Every process does the same mandatory work per request (key lookup cached 1 s, one rate-limit
 * count in memory, one log line at the default level, `x-request-id`). Interleaved rounds, medians
 * (scripts/bench/harness). `--write` puts the result between the markers in docs/benchmarks.md.
 * `--only graphql` (`|`-separated, matched against target names) measures a subset while
 * iterating: a target's peer is measured with it, and only the processes needed are started.
 */
import { benchArgs } from './harness/options.js';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { benchDatabase } from './database.js';
import { BILL_PAGE, HOME_SCREEN, ME_QUERY } from './documents.js';
import { addedLatency } from './facade-latency.js';
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
  type Target,
} from './harness/index.js';

const { values } = benchArgs({
  options: {
    ...roundFlags,
    connections: { type: 'string', default: '32' },
    'facade-rate': { type: 'string', default: '100' },
    only: { type: 'string' },
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
    // The home screen reads the caller's custodial Solana wallet, which production refuses to
    // serve without a master key: without one it answered a 503 and `data: null`, cheaply.
    SOLANA_MASTER_KEYS_SANDBOX: `1:${randomBytes(32).toString('base64')}`,
  };
  const servers: Array<Started<{ pid: number; port: number }>> = [];
  const databases = [database];
  try {
    const gateway = await startServer<{
      pid: number;
      port: number;
      control: number;
      key: string;
      statements: Record<string, number>;
    }>('scripts/bench/server.ts', [], env);
    servers.push(gateway);
    const peer = async (script: string, args: string[] = []) => {
      const started = await startServer<{ pid: number; port: number }>(`scripts/bench/peers/${script}`, args, env);
      servers.push(started);
      return started;
    };
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
    type Server = Started<{ pid: number; port: number }>;
    const RAW = 'raw Fastify, GET /api/v1/user/me';
    const APOLLO = 'bare Apollo Server 5, `me` (20 fields)';
    const APOLLO_HOME = 'bare Apollo Server 5 over the gateway resolvers, home screen';
    const BILLS = 'gateway /graphql, 20 bill records';
    const onGateway = async () => gateway as Server;
    // The same gateway at LOG_LEVEL=warn (no request lines): what the default level costs.
    const quietGateway = once(async () => {
      const started = await startServer<{ pid: number; port: number }>('scripts/bench/server.ts', [], {
        ...env,
        LOG_LEVEL: 'warn',
      });
      servers.push(started);
      return started;
    });
    const REST = 'gateway REST GET /api/v1/user/me';
    const setLevel = async (level: 'info' | 'warn') => {
      const answer = await fetch(`http://127.0.0.1:${gateway.ready.control}/level/${level}`, { method: 'POST' });
      if ((await answer.text()) !== level) throw new Error(`the gateway's log level did not become ${level}`);
    };
    /** The target's rounds with the gateway's level at warn, set back to info after each. */
    const atWarn = (target: Target): Target => ({
      ...target,
      drive: async (seconds) => {
        await setLevel('warn');
        let load: Awaited<ReturnType<Target['drive']>>;
        try {
          load = await target.drive(seconds);
        } catch (error) {
          // The load's own failure is the one to report, whether or not the level comes back.
          await setLevel('info').catch(() => undefined);
          throw error;
        }
        await setLevel('info');
        return load;
      },
    });
    /** The target's rounds with the dashboard's request log not recording, switched back on after each. */
    const withoutRequestLog = (target: Target): Target => ({
      ...target,
      drive: async (seconds) => {
        await switchRequestLog('off');
        try {
          return await target.drive(seconds);
        } finally {
          await switchRequestLog('on');
        }
      },
    });
    const switchRequestLog = async (state: 'on' | 'off') => {
      const answer = await fetch(`http://127.0.0.1:${gateway.ready.control}/request-log/${state}`, { method: 'POST' });
      if ((await answer.text()) !== state) throw new Error(`the gateway's request log did not turn ${state}`);
    };
    // A facade in front of this gateway, on a database of its own (the upstream holds the keys).
    const facade = once(async () => {
      const own = await benchDatabase('postgres');
      databases.push(own);
      const started = await startServer<{ pid: number; port: number }>('scripts/bench/facade-server.ts', [], {
        ...env,
        DATABASE_URL: own.url,
        UPSTREAM_URL: `http://127.0.0.1:${gateway.ready.port}`,
        BENCH_KEY: gateway.ready.key,
      });
      servers.push(started);
      return started;
    });
    const GRAPHQL_ME = 'gateway /graphql, `me` (20 fields)';
    const rawPeer = once(() => peer('raw-fastify.ts'));
    const apolloPeer = once(() => peer('apollo.ts'));
    // Each target names its process (peers start only when a chosen target needs them) and its peer.
    const plan: Array<{
      name: string;
      peer?: string;
      on: () => Promise<Server>;
      make: (s: Server, name: string, peer?: string) => Target;
    }> = [
      { name: RAW, on: rawPeer, make: (s, n) => get(n, s, '/api/v1/user/me') },
      {
        name: REST,
        peer: RAW,
        on: onGateway,
        make: (s, n, p) => get(n, s, '/api/v1/user/me', p),
      },
      {
        name: 'gateway REST, same process at LOG_LEVEL=warn, GET /api/v1/user/me',
        on: onGateway,
        make: (s, n) => atWarn(get(n, s, '/api/v1/user/me')),
      },
      {
        name: 'gateway REST, same process without the request log, GET /api/v1/user/me',
        on: onGateway,
        make: (s, n) => withoutRequestLog(get(n, s, '/api/v1/user/me')),
      },
      {
        name: 'gateway REST, second process at LOG_LEVEL=warn, GET /api/v1/user/me',
        on: quietGateway,
        make: (s, n) => get(n, s, '/api/v1/user/me'),
      },
      {
        name: 'Sofa, GET /api/me',
        peer: RAW,
        on: once(() => peer('sofa.ts')),
        make: (s, n, p) => get(n, s, '/api/me', p),
      },
      { name: APOLLO, on: apolloPeer, make: (s, n) => post(n, s, ME_QUERY) },
      {
        name: 'Mercurius + graphql-jit, `me` (20 fields)',
        peer: APOLLO,
        on: once(() => peer('mercurius.ts')),
        make: (s, n, p) => post(n, s, ME_QUERY, p),
      },
      {
        name: GRAPHQL_ME,
        peer: APOLLO,
        on: onGateway,
        make: (s, n, p) => post(n, s, ME_QUERY, p),
      },
      { name: BILLS, on: onGateway, make: (s, n) => post(n, s, BILL_PAGE) },
      { name: APOLLO_HOME, on: once(() => peer('apollo.ts', ['--graph'])), make: (s, n) => post(n, s, HOME_SCREEN) },
      {
        name: 'gateway /graphql, home screen',
        peer: APOLLO_HOME,
        on: onGateway,
        make: (s, n, p) => post(n, s, HOME_SCREEN, p),
      },
      {
        name: 'facade REST GET /api/v1/user/me (passed through to the gateway)',
        peer: REST,
        on: facade,
        make: (s, n, p) => get(n, s, '/api/v1/user/me', p),
      },
      {
        name: 'facade /graphql, `me` (20 fields)',
        peer: GRAPHQL_ME,
        on: facade,
        make: (s, n, p) => post(n, s, ME_QUERY, p),
      },
    ];
    const wanted = values.only?.split('|').map((w) => w.trim().toLowerCase());
    const chosen = new Set(
      plan
        .filter(({ name }) => !wanted || wanted.some((w) => name.toLowerCase().includes(w)))
        .flatMap((t) => [t.name, ...(t.peer ? [t.peer] : [])]),
    );
    const targets: Target[] = [];
    for (const t of plan) if (chosen.has(t.name)) targets.push(t.make(await t.on(), t.name, t.peer));
    const results = await measureInterleaved(targets, rounds);
    const latency = [...chosen].some((name) => name.startsWith('facade'))
      ? await addedLatency(
          [
            {
              name: 'facade REST GET /api/v1/user/me',
              request: { path: '/api/v1/user/me', method: 'GET', headers: key },
            },
            {
              name: 'facade /graphql `me`',
              request: { path: '/graphql', method: 'POST', headers: json, body: JSON.stringify({ query: ME_QUERY }) },
            },
          ],
          {
            directUrl: `http://127.0.0.1:${gateway.ready.port}`,
            facadeUrl: `http://127.0.0.1:${(await facade()).ready.port}`,
            rate: Number(values['facade-rate']),
            seconds: rounds.roundSeconds,
            rounds: rounds.rounds,
          },
        )
      : [];
    const block = render(results, gateway.ready.statements, rounds.note, latency);
    console.log(`\n${block}`);
    if (values.write) writeResults(block);
  } finally {
    for (const server of servers.reverse()) await server.stop();
    for (const own of databases) await own.drop();
  }
  process.exit(0);
}

function once<T>(start: () => Promise<T>): () => Promise<T> {
  let started: Promise<T> | undefined;
  return () => (started ??= start());
}

function render(results: Measured[], statements: Record<string, number>, note: string, latency: string[]): string {
  const by = (prefix: string) => results.find((r) => r.name.startsWith(prefix));
  const ratio = (a: Measured | undefined, b: Measured | undefined) =>
    a && b ? (a.cpuMicrosPerRequest / b.cpuMicrosPerRequest).toFixed(2) : undefined;
  const line = (text: string | undefined) => (text && !text.includes('undefined') ? [text] : []);
  const rest = by('gateway REST GET');
  const quiet = by('gateway REST, same process at LOG_LEVEL=warn');
  const quietElsewhere = by('gateway REST, second process at LOG_LEVEL=warn');
  const unlogged = by('gateway REST, same process without the request log');
  const me = by('gateway /graphql, `me`');
  const home = by('gateway /graphql, home');
  return [
    `Measured ${machineLine()}.`,
    `Command: \`npm run bench -- --round ${values.round} --rounds ${values.rounds} --warmup ${values.warmup} --connections ${values.connections}${values.only ? ` --only '${values.only}'` : ''}${latency.length ? ` --facade-rate ${values['facade-rate']}` : ''}\` with \`DATABASE_URL\` set; ${note}.`,
    '',
    resultTable(results),
    '',
    ...line(
      `- gateway REST / raw Fastify, CPU per request: **${ratio(rest, by('raw Fastify'))}×** (goal ≤ 1.25×)${ratio(rest, by('Sofa')) ? `; / Sofa: ${ratio(rest, by('Sofa'))}×` : ''}`,
    ),
    ...line(
      `- gateway REST at the default LOG_LEVEL=info / the same process at warn, CPU per request: **${ratio(rest, quiet)}×** (goal ≤ 1.10×)`,
    ),
    ...line(
      `- gateway REST at the default LOG_LEVEL=info / a second gateway process started at warn: ${ratio(rest, quietElsewhere)}×`,
    ),
    ...line(
      `- gateway REST with the dashboard's request log / the same process without it, CPU per request: ${ratio(rest, unlogged)}×`,
    ),
    ...line(
      `- gateway /graphql \`me\` / bare Apollo: **${ratio(me, by('bare Apollo Server 5, `me`'))}×** (goal ≤ 1.15×)${ratio(me, by('Mercurius')) ? `; / Mercurius: ${ratio(me, by('Mercurius'))}×` : ''}`,
    ),
    ...line(
      `- gateway /graphql home screen / bare Apollo over the same resolvers: **${ratio(home, by('bare Apollo Server 5 over'))}×** (goal ≤ 1.15×)`,
    ),
    ...line(`- home screen / 20 bill records, CPU per request: ${ratio(home, by('gateway /graphql, 20 bill'))}×`),
    ...line(
      `- facade REST me (pass-through) / the gateway's REST me, CPU per request of each process: ${ratio(by('facade REST'), rest)}×; facade /graphql \`me\` / the gateway's: ${ratio(by('facade /graphql'), me)}×`,
    ),
    ...latency,
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
  // The table as the linter lays it out (aligned columns), so a written run passes `npm run lint`.
  spawnSync('npx', ['biome', 'format', '--write', path], { stdio: 'inherit' });
  console.log(`\nWrote ${path}`);
}

/**
 * npm run bench:fanout [-- --clients 100 --events 5000 --db pglite|postgres]
 *
 * Subscription fan-out: `clients` graphql-ws clients subscribe to `events`, then `events` events
 * are emitted in batches of 100 by EMITTERS concurrent callers (the same for both servers: one
 * emitter measures its own round trips); reports messages delivered per second and p50/p99
 * latency from emission to receipt, for the gateway and for a plain graphql-ws server in the same
 * run. The gateway's database is embedded PGlite or, with `--db postgres`, a fresh database on
 * DATABASE_URL's server. Server pinned to CPU 0, clients to CPU 1.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { benchDatabase } from './database.js';
import { onLoadCore, spawnServer } from './harness/pinning.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '100' },
    events: { type: 'string', default: '5000' },
    db: { type: 'string', default: 'pglite' },
  },
});
const clients = Number(values.clients);
const total = Number(values.events);
const BATCH = 100;
const EMITTERS = 4;

async function run(mode: 'gateway' | 'plain') {
  const database = await benchDatabase(mode === 'gateway' ? values.db! : 'pglite');
  const server = spawnServer('scripts/bench/fanout-server.ts', [mode], {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: '',
  });
  const ready = await new Promise<{ port: number; key: string }>((resolve) =>
    createInterface({ input: server.stdout! }).on('line', (l) => l.startsWith('{"ready"') && resolve(JSON.parse(l))),
  );
  const latencies: number[] = [];
  let lastAt = 0;
  const sockets = Array.from({ length: clients }, () =>
    createClient({
      url: `ws://127.0.0.1:${ready.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': ready.key },
      retryAttempts: 0,
    }),
  );
  for (const client of sockets) {
    client.subscribe<{ events: { data: { t: number } } }>(
      { query: 'subscription { events { id seq data } }' },
      {
        next: (m) => {
          const now = Date.now();
          latencies.push(now - m.data!.events.data.t);
          lastAt = now;
        },
        error: (e) => console.error(e),
        complete: () => undefined,
      },
    );
  }
  await new Promise((r) => setTimeout(r, 2000));
  const started = Date.now();
  let sent = 0;
  const emitter = async () => {
    while (sent < total) {
      const n = Math.min(BATCH, total - sent);
      sent += n;
      await fetch(`http://127.0.0.1:${ready.port}/bench/emit?n=${n}`, { method: 'POST' });
    }
  };
  await Promise.all(Array.from({ length: EMITTERS }, emitter));
  const deadline = Date.now() + 60_000;
  while (latencies.length < clients * total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const seconds = (lastAt - started) / 1000;
  latencies.sort((a, b) => a - b);
  const result = {
    mode,
    delivered: latencies.length,
    messagesPerSecond: Math.round(latencies.length / seconds),
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
  };
  await Promise.all(sockets.map((c) => c.dispose()));
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
  await database.drop();
  return result;
}

await onLoadCore(async () => {
  const plain = await run('plain');
  const gateway = await run('gateway');
  console.log(
    `Gateway database: ${values.db}; ${clients} clients, ${total} events, ${EMITTERS} emitters of ${BATCH}-event batches.\n`,
  );
  console.log(`| server | messages delivered | messages/s | p50 ms | p99 ms |\n|---|---|---|---|---|`);
  for (const r of [gateway, plain])
    console.log(`| ${r.mode} | ${r.delivered} | ${r.messagesPerSecond} | ${r.p50} | ${r.p99} |`);
  console.log(
    `\nGateway / plain graphql-ws throughput: ${(gateway.messagesPerSecond / plain.messagesPerSecond).toFixed(2)}× (target ≥ 1.5)`,
  );
  process.exit(0);
});

/**
 * npm run bench:events [-- --sockets 1000 --users 100 --rate 500 --batch 5 --seconds 20 --webhook-users 10 --db postgres|pglite]
 *
 * End-to-end event latency, timestamped at commit. `rate` events per second are committed (in
 * transactions of `batch`, round-robin over `users` users); `sockets` graphql-ws clients (spread
 * evenly over the users) subscribe to `events`, so each event reaches sockets/users sockets. The
 * server (scripts/bench/events-server.ts) answers each commit with the time right after COMMIT;
 * latency = receipt − that. Reported: commit → subscriber p50/p99/max, commit → first webhook
 * attempt p50/p99 (endpoints on the first `webhook-users` users, receiver on CPU 1), and server
 * memory per open socket (RSS growth from opening and subscribing every socket, ÷ sockets; and the
 * V8 heap still in use after a full GC, ÷ sockets, which RSS's allocator slack does not blur), for
 * the gateway and for a plain graphql-ws server in the same run. Server on CPU 0, clients on CPU 1.
 */
import { benchArgs } from './harness/options.js';
import { createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { benchDatabase } from './database.js';
import { machineLine, onLoadCore, maximum, percentile, rssMiB, type Started, startServer } from './harness/index.js';
import { sampleForeignXids } from './harness/foreign-xids.js';

const { values } = benchArgs({
  options: {
    sockets: { type: 'string', default: '1000' },
    users: { type: 'string', default: '100' },
    rate: { type: 'string', default: '500' },
    batch: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '20' },
    'webhook-users': { type: 'string', default: '10' },
    db: { type: 'string', default: process.env.DATABASE_URL ? 'postgres' : 'pglite' },
    modes: { type: 'string', default: 'plain,gateway' },
  },
});
const sockets = Number(values.sockets);
const users = Number(values.users);
const rate = Number(values.rate);
const batch = Number(values.batch);
const seconds = Number(values.seconds);
const webhookUsers = Number(values['webhook-users']);

interface Outcome {
  mode: string;
  committed: number;
  eventsPerSecond: number;
  delivered: number;
  expected: number;
  p50: number;
  p99: number;
  max: number;
  kibPerSocket: number;
  heapKibPerSocket: number;
  webhook?: { delivered: number; expected: number; p50: number; p99: number };
  /** p99 age (ms) of the oldest transaction holding an id in ANOTHER database of the cluster. */
  foreignXidP99?: number;
}

const CONNECT_WAVE = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(mode: 'gateway' | 'plain'): Promise<Outcome> {
  const database = await benchDatabase(mode === 'gateway' ? values.db! : 'pglite');
  const receiver =
    mode === 'gateway' && webhookUsers > 0
      ? await startServer<{ pid: number; port: number }>(
          'scripts/bench/webhook-receiver.ts',
          [],
          process.env,
          60_000,
          1,
        )
      : undefined;
  let server: Started<{ pid: number; port: number; keys: string[] }> | undefined;
  try {
    server = await startServer<{ pid: number; port: number; keys: string[] }>(
      'scripts/bench/events-server.ts',
      [mode],
      {
        ...process.env,
        DATABASE_URL: database.url,
        REDIS_URL: '',
        BENCH_USERS: String(users),
        BENCH_WEBHOOK_USERS: String(receiver ? webhookUsers : 0),
        BENCH_WEBHOOK_URL: receiver ? `http://127.0.0.1:${receiver.ready.port}/hooks` : '',
      },
      600_000,
    );
    const base = `http://127.0.0.1:${server.ready.port}`;
    await sleep(2000);
    const heapUsed = async () => ((await (await fetch(`${base}/bench/heap`)).json()) as { heapUsed: number }).heapUsed;
    const rssBefore = rssMiB(server.pid);
    const heapBefore = await heapUsed();

    const receipts: Array<[string, number]> = [];
    let connected = 0;
    // Sockets open in waves of CONNECT_WAVE (each waits for the previous wave's acknowledgements),
    // as clients arrive in practice, rather than 1,000 handshakes and key checks in one instant.
    const clients: ReturnType<typeof createClient>[] = [];
    const open = (i: number) => {
      const client = createClient({
        url: `${base.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { 'x-api-key': server!.ready.keys[i % users] },
        retryAttempts: 0,
        lazy: false,
        on: { connected: () => (connected += 1) },
      });
      client.subscribe<{ events: { id: string } }>(
        { query: 'subscription { events { id seq } }' },
        {
          next: (message) => receipts.push([message.data!.events.id, Date.now()]),
          error: (error) => console.error('subscription error', error),
          complete: () => undefined,
        },
      );
      clients.push(client);
    };
    const connectDeadline = Date.now() + 120_000;
    for (let i = 0; i < sockets; i++) {
      open(i);
      if ((i + 1) % CONNECT_WAVE === 0) while (connected < i + 1 && Date.now() < connectDeadline) await sleep(20);
    }
    while (connected < sockets && Date.now() < connectDeadline) await sleep(100);
    await sleep(3000); // every subscription registered (replay done) before the first event
    const kibPerSocket = Math.round(((rssMiB(server.pid) - rssBefore) * 1024) / sockets);
    // What stays allocated per socket once the garbage of opening them is collected.
    const heapKibPerSocket = Math.round((await heapUsed()) - heapBefore) / 1024 / sockets;

    // Transactions of other databases (other benches and tests on a shared server) holding a
    // transaction id: the relay no longer waits for them, but they share the server. Sampled every
    // 100 ms while events are committed, for the record beside the latencies.
    const observer = mode === 'gateway' && database.url ? new pg.Client({ connectionString: database.url }) : undefined;
    await observer?.connect();
    const foreign = sampleForeignXids(observer);
    const foreignAges = foreign.ages;

    // Commits at a steady rate, on a schedule (a slow commit does not delay the next ones).
    const committedAt = new Map<string, number>();
    const ownerOf = new Map<string, number>();
    const perTick = batch;
    const interval = (1000 * perTick) / rate;
    const started = Date.now();
    const inFlight = new Set<Promise<void>>();
    let tick = 0;
    while (Date.now() - started < seconds * 1000) {
      const user = tick % users;
      const commit = fetch(`${base}/bench/commit?user=${user}&n=${perTick}`, { method: 'POST' })
        .then((r) => r.json() as Promise<{ ids: string[]; committedAt: number }>)
        .then(({ ids, committedAt: at }) => {
          for (const id of ids) {
            committedAt.set(id, at);
            ownerOf.set(id, user);
          }
        })
        .catch((error) => console.error('commit failed', error));
      inFlight.add(commit);
      void commit.finally(() => inFlight.delete(commit));
      tick += 1;
      const wait = started + tick * interval - Date.now();
      if (wait > 0) await sleep(wait);
    }
    await Promise.all(inFlight);
    foreign.stop();
    await observer?.end();
    const emitSeconds = (Date.now() - started) / 1000;
    const perUser = (u: number) => Math.floor(sockets / users) + (u < sockets % users ? 1 : 0);
    let expected = 0;
    for (const user of ownerOf.values()) expected += perUser(user);
    const drainDeadline = Date.now() + 60_000;
    while (receipts.length < expected && Date.now() < drainDeadline) await sleep(200);
    const latencies = receipts.flatMap(([id, at]) => {
      const committed = committedAt.get(id);
      return committed === undefined ? [] : [at - committed];
    });

    let webhook: Outcome['webhook'];
    if (receiver) {
      const hooked = [...ownerOf.entries()].filter(([, u]) => u < webhookUsers).map(([id]) => id);
      let arrivals: Record<string, number> = {};
      const hookDeadline = Date.now() + 120_000;
      do {
        await sleep(500);
        arrivals = (await (await fetch(`http://127.0.0.1:${receiver.ready.port}/arrivals`)).json()) as Record<
          string,
          number
        >;
      } while (hooked.some((id) => arrivals[id] === undefined) && Date.now() < hookDeadline);
      const hookLatencies = hooked.flatMap((id) =>
        arrivals[id] === undefined ? [] : [arrivals[id]! - committedAt.get(id)!],
      );
      webhook = {
        delivered: hookLatencies.length,
        expected: hooked.length,
        p50: percentile(hookLatencies, 50),
        p99: percentile(hookLatencies, 99),
      };
    }
    await Promise.all(clients.map((c) => c.dispose()));
    return {
      mode,
      committed: committedAt.size,
      eventsPerSecond: Math.round(committedAt.size / emitSeconds),
      delivered: latencies.length,
      expected,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: maximum(latencies),
      kibPerSocket,
      heapKibPerSocket: Math.round(heapKibPerSocket * 10) / 10,
      ...(webhook ? { webhook } : {}),
      ...(foreignAges.length > 0 ? { foreignXidP99: Math.round(percentile(foreignAges, 99)) } : {}),
    };
  } finally {
    await server?.stop();
    await receiver?.stop();
    await database.drop();
  }
}

await onLoadCore(async () => {
  const outcomes: Outcome[] = [];
  for (const mode of values.modes!.split(',') as Array<'gateway' | 'plain'>) {
    console.log(`== ${mode}`);
    outcomes.push(await run(mode));
    console.log(JSON.stringify(outcomes.at(-1)));
  }
  const rows = outcomes.map(
    (o) =>
      `| ${o.mode} | ${o.eventsPerSecond} | ${o.delivered} / ${o.expected} | ${o.p50} | ${o.p99} | ${o.max} | ${o.kibPerSocket} | ${o.heapKibPerSocket} | ` +
      (o.webhook
        ? `${o.webhook.delivered} / ${o.webhook.expected} | ${o.webhook.p50} | ${o.webhook.p99} |`
        : '— | — | — |'),
  );
  console.log(
    `\nMeasured ${machineLine()}; gateway database ${values.db}.\n` +
      `Command: \`npm run bench:events -- --sockets ${sockets} --users ${users} --rate ${rate} --batch ${batch} --seconds ${seconds} --webhook-users ${webhookUsers}\`` +
      ` (${sockets / users} sockets per user, so ${(rate * sockets) / users} messages/s).\n\n` +
      '| server | events/s committed | messages received / expected | commit → subscriber p50 ms | p99 ms | max ms | RSS KiB per socket | heap KiB per socket (after GC) | webhooks received / expected | commit → first webhook attempt p50 ms | p99 ms |\n' +
      '|---|---|---|---|---|---|---|---|---|---|---|\n' +
      rows.join('\n') +
      outcomes
        .filter((o) => o.foreignXidP99 !== undefined)
        .map(
          (o) =>
            `\n\n${o.mode}: oldest transaction holding an id in another database of the cluster while events were committed, p99 ${o.foreignXidP99} ms (the relay does not wait for it; it shares the server).`,
        )
        .join(''),
  );
  process.exit(0);
});

/**
 * npm run bench:events [-- --sockets 1000 --users 100 --rate 500 --batch 5 --seconds 20 --webhook-users 10 --db postgres|pglite
 *                          --instances 2 --source transfers --slow 0.05]
 *
 * `--source transfers`: the events are caused by real requests, P2P transfers of ₦1 from user i to
 * user i+1 over REST at rate/2 a second (each writes two events, one per side), sent to the
 * instances in turn; latency is counted from the time the transfer was written (its events'
 * `updatedAt`, taken before the statement, so an upper bound of commit → receipt). `--instances`:
 * that many gateway processes on one database (with REDIS_URL, the doorbell crosses them), the
 * sockets spread over them in turn. `--slow`: that share of the sockets read slowly (the client
 * stops reading its socket for 9 s of every 10), reported apart; the event feed's queued events
 * are sampled to show what they hold in memory.
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
    // The plain server only commits events itself: with `--source transfers` it has no peer run.
    modes: { type: 'string' },
    instances: { type: 'string', default: '1' },
    source: { type: 'string', default: 'commits' },
    slow: { type: 'string', default: '0' },
  },
});
const instances = Number(values.instances);
const source = values.source === 'transfers' ? 'transfers' : 'commits';
const slowEvery = Number(values.slow) > 0 ? Math.round(1 / Number(values.slow)) : 0;

/** A client that reads its socket for 1 s of every 10: a partner's consumer that falls behind. */
class SlowWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols);
    this.once('open', () => {
      const tcp = (this as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      const cycle = setInterval(() => {
        tcp.pause();
        setTimeout(() => tcp.resume(), 9_000);
      }, 10_000);
      tcp.pause();
      setTimeout(() => tcp.resume(), 9_000);
      this.once('close', () => clearInterval(cycle));
    });
  }
}
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
  /** The slow sockets' share: what they got in the end, and the most events held for subscribers. */
  slow?: { delivered: number; expected: number; p99: number; maxQueued: number };
  instances: number;
  source: string;
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
  const servers: Array<Started<{ pid: number; port: number; keys: string[]; owners: string[] }>> = [];
  try {
    const count = mode === 'gateway' ? instances : 1;
    for (let i = 0; i < count; i++)
      servers.push(
        await startServer<{ pid: number; port: number; keys: string[]; owners: string[] }>(
          'scripts/bench/events-server.ts',
          [mode],
          {
            ...process.env,
            DATABASE_URL: database.url,
            // One instance needs no doorbell beyond its own; several hear each other through Redis.
            REDIS_URL: count > 1 ? (process.env.REDIS_URL ?? '') : '',
            BENCH_USERS: String(i === 0 ? users : 0),
            BENCH_MONEY: source === 'transfers' ? '1' : '0',
            BENCH_WEBHOOK_USERS: String(receiver ? webhookUsers : 0),
            BENCH_WEBHOOK_URL: receiver ? `http://127.0.0.1:${receiver.ready.port}/hooks` : '',
          },
          600_000,
        ),
      );
    const server = servers[0]!;
    const bases = servers.map((s) => `http://127.0.0.1:${s.ready.port}`);
    await sleep(2000);
    const heapUsed = async () => {
      let sum = 0;
      for (const b of bases) sum += ((await (await fetch(`${b}/bench/heap`)).json()) as { heapUsed: number }).heapUsed;
      return sum;
    };
    const rssOfAll = () => servers.reduce((sum, s) => sum + rssMiB(s.pid), 0);
    const rssBefore = rssOfAll();
    const heapBefore = await heapUsed();

    /** [event id, received at, written at (transfers only), socket's user, slow socket]. */
    const receipts: Array<[string, number, number | undefined, number, boolean]> = [];
    let connected = 0;
    // Sockets open in waves of CONNECT_WAVE (each waits for the previous wave's acknowledgements),
    // as clients arrive in practice, rather than 1,000 handshakes and key checks in one instant.
    const clients: ReturnType<typeof createClient>[] = [];
    const open = (i: number) => {
      const slow = slowEvery > 0 && i % slowEvery === 0;
      const client = createClient({
        url: `${bases[i % bases.length]!.replace('http', 'ws')}/graphql`,
        webSocketImpl: slow ? SlowWebSocket : WebSocket,
        connectionParams: { 'x-api-key': server.ready.keys[i % users] },
        retryAttempts: 0,
        lazy: false,
        on: { connected: () => (connected += 1) },
      });
      client.subscribe<{ events: { id: string; data: { updatedAt?: string } | null } }>(
        {
          query: `subscription { events${source === 'transfers' ? '(types: ["transaction.completed"])' : ''} { id seq data } }`,
        },
        {
          next: (message) => {
            const { id, data } = message.data!.events;
            const written = data?.updatedAt ? Date.parse(data.updatedAt) : undefined;
            receipts.push([id, Date.now(), written, i % users, slow]);
          },
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
    const kibPerSocket = Math.round(((rssOfAll() - rssBefore) * 1024) / sockets);
    // What stays allocated per socket once the garbage of opening them is collected.
    const heapKibPerSocket = Math.round((await heapUsed()) - heapBefore) / 1024 / sockets;

    // Transactions of other databases (other benches and tests on a shared server) holding a
    // transaction id: the relay no longer waits for them, but they share the server. Sampled every
    // 100 ms while events are committed, for the record beside the latencies.
    const observer = mode === 'gateway' && database.url ? new pg.Client({ connectionString: database.url }) : undefined;
    await observer?.connect();
    const foreign = sampleForeignXids(observer);
    const foreignAges = foreign.ages;

    // The event feed's queued events on every instance, sampled while events flow.
    let maxQueued = 0;
    const queuedSampler = setInterval(() => {
      void Promise.all(
        bases.map((b) =>
          fetch(`${b}/bench/queued`)
            .then((r) => r.json() as Promise<{ queued?: number }>)
            .then((q) => q.queued ?? 0)
            .catch(() => 0),
        ),
      ).then((counts) => {
        maxQueued = Math.max(
          maxQueued,
          counts.reduce((a, b) => a + b, 0),
        );
      });
    }, 500);

    // Commits (or transfers) at a steady rate, on a schedule (a slow one does not delay the next).
    const committedAt = new Map<string, number>();
    const ownerOf = new Map<string, number>();
    const perTick = source === 'transfers' ? 2 : batch;
    const interval = (1000 * perTick) / rate;
    const started = Date.now();
    const inFlight = new Set<Promise<void>>();
    let tick = 0;
    let transfers = 0;
    let refused = 0;
    const perUser = (u: number) => Math.floor(sockets / users) + (u < sockets % users ? 1 : 0);
    /** The slow sockets of each user (socket i is user i % users's, slow when i % slowEvery is 0). */
    const slowOf = Array.from({ length: users }, () => 0);
    if (slowEvery > 0) for (let i = 0; i < sockets; i += slowEvery) slowOf[i % users]! += 1;
    let expected = 0;
    let expectedSlow = 0;
    while (Date.now() - started < seconds * 1000) {
      const user = tick % users;
      const target = bases[tick % bases.length]!;
      const commit =
        source === 'transfers'
          ? fetch(`${target}/api/v1/wallet/transfer`, {
              method: 'POST',
              headers: { 'x-api-key': server.ready.keys[user]!, 'content-type': 'application/json' },
              body: JSON.stringify({ amount: 1, recipient: server.ready.owners[(user + 1) % users] }),
            })
              .then(async (r) => {
                await r.arrayBuffer();
                if (r.status !== 201) return void (refused += 1);
                transfers += 1;
                expected += perUser(user) + perUser((user + 1) % users);
                expectedSlow += slowOf[user]! + slowOf[(user + 1) % users]!;
              })
              .catch((error) => console.error('transfer failed', error))
          : fetch(`${target}/bench/commit?user=${user}&n=${perTick}`, { method: 'POST' })
              .then((r) => r.json() as Promise<{ ids: string[]; committedAt: number }>)
              .then(({ ids, committedAt: at }) => {
                for (const id of ids) {
                  committedAt.set(id, at);
                  ownerOf.set(id, user);
                  expected += perUser(user);
                  expectedSlow += slowOf[user]!;
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
    const drainDeadline = Date.now() + 60_000;
    while (receipts.length < expected && Date.now() < drainDeadline) await sleep(200);
    clearInterval(queuedSampler);
    const writtenAt = (receipt: (typeof receipts)[number]) => receipt[2] ?? committedAt.get(receipt[0]);
    const latencyOf = (rows: typeof receipts) =>
      rows.flatMap((receipt) => {
        const at = writtenAt(receipt);
        return at === undefined ? [] : [receipt[1] - at];
      });
    const latencies = latencyOf(receipts.filter((r) => !r[4]));
    const slowReceipts = receipts.filter((r) => r[4]);
    if (source === 'transfers') {
      // The events' owners, from the sockets that received them (each event goes to its owner's).
      for (const [id, , written, user] of receipts) {
        ownerOf.set(id, user);
        if (written !== undefined) committedAt.set(id, written);
      }
    }

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
    const committed = source === 'transfers' ? transfers * 2 : committedAt.size;
    if (refused > 0) console.error(`${refused} transfers refused`);
    return {
      mode,
      instances: servers.length,
      source,
      committed,
      eventsPerSecond: Math.round(committed / emitSeconds),
      // The others: every socket but the slow ones.
      delivered: latencies.length,
      expected: expected - expectedSlow,
      ...(slowEvery > 0
        ? {
            slow: {
              delivered: slowReceipts.length,
              expected: expectedSlow,
              p99: percentile(latencyOf(slowReceipts), 99),
              maxQueued,
            },
          }
        : {}),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: maximum(latencies),
      kibPerSocket,
      heapKibPerSocket: Math.round(heapKibPerSocket * 10) / 10,
      ...(webhook ? { webhook } : {}),
      ...(foreignAges.length > 0 ? { foreignXidP99: Math.round(percentile(foreignAges, 99)) } : {}),
    };
  } finally {
    for (const started of servers) await started.stop();
    await receiver?.stop();
    await database.drop();
  }
}

await onLoadCore(async () => {
  const outcomes: Outcome[] = [];
  const modes = values.modes ?? (source === 'transfers' ? 'gateway' : 'plain,gateway');
  for (const mode of modes.split(',') as Array<'gateway' | 'plain'>) {
    console.log(`== ${mode}`);
    outcomes.push(await run(mode));
    console.log(JSON.stringify(outcomes.at(-1)));
  }
  const rows = outcomes.map(
    (o) =>
      `| ${o.mode}${o.instances > 1 ? ` ×${o.instances}` : ''} | ${o.source} | ${o.eventsPerSecond} | ${o.delivered} / ${o.expected} | ${o.p50} | ${o.p99} | ${o.max} | ${o.kibPerSocket} | ${o.heapKibPerSocket} | ` +
      (o.webhook
        ? `${o.webhook.delivered} / ${o.webhook.expected} | ${o.webhook.p50} | ${o.webhook.p99} |`
        : '— | — | — |') +
      (o.slow ? ` ${o.slow.delivered} / ${o.slow.expected} | ${o.slow.p99} | ${o.slow.maxQueued} |` : ' — | — | — |'),
  );
  console.log(
    `\nMeasured ${machineLine()}; gateway database ${values.db}.\n` +
      `Command: \`npm run bench:events -- --sockets ${sockets} --users ${users} --rate ${rate} --batch ${batch} --seconds ${seconds} --webhook-users ${webhookUsers}` +
      `${instances > 1 ? ` --instances ${instances}` : ''}${source === 'transfers' ? ' --source transfers' : ''}${slowEvery > 0 ? ` --slow ${values.slow}` : ''}\`` +
      ` (${sockets / users} sockets per user, so ${(rate * sockets) / users} messages/s).\n\n` +
      '| server | events caused by | events/s committed | messages received / expected (sockets reading at full speed) | commit → subscriber p50 ms | p99 ms | max ms | RSS KiB per socket | heap KiB per socket (after GC) | webhooks received / expected | commit → first webhook attempt p50 ms | p99 ms | slow sockets: received / expected | their p99 ms | most events queued for subscribers |\n' +
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
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

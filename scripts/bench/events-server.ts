/**
 * Server side of `npm run bench:events`, pinned to CPU 0. Both modes take
 * `POST /bench/commit?user=<i>&n=<k>` (k events for user i) and answer `{ ids, committedAt }`, the
 * time taken right after the commit, and print `{"ready":true,"pid":…,"port":…,"keys":[…]}`.
 * With BENCH_MONEY=1 the gateway's users get FULL_ACCESS keys and funded wallets, so the driver can
 * cause events by real requests (P2P transfers) instead; a second instance on the same database is
 * started with BENCH_USERS=0 (it seeds nothing). `GET /bench/queued` answers how many live events
 * the event feed holds for subscribers that have not taken them yet.
 *   - `gateway`: the real app with its workers (relay, job runner), as `npm start` runs it: events
 *     recorded in one transaction, stamped by the relay, fanned out by the event feed to graphql-ws
 *     subscribers, and delivered to the webhook endpoints of the first BENCH_WEBHOOK_USERS users.
 *   - `plain`: a bare graphql-ws server (graphql-js, `ws`) routing the same event objects to each
 *     user's subscribers from memory: the floor for the socket side.
 */
import { createServer } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { recordEvents } from '../../src/domain/events/outbox.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { createServices } from '../../src/services.js';
import { startWorkers } from '../../src/workers.js';

const mode = process.argv[2];
const users = Number(process.env.BENCH_USERS ?? 100);
const webhookUsers = Number(process.env.BENCH_WEBHOOK_USERS ?? 0);
const webhookUrl = process.env.BENCH_WEBHOOK_URL ?? '';
const money = process.env.BENCH_MONEY === '1';
/** Each user's funds when money moves: far more than the run's transfers of ₦1 take. */
const FUNDS = 100_000_000n;

const ready = (port: number, keys: string[], owners: string[] = []) =>
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, port, keys, owners })}\n`);
const query = (url: string) => new URL(url, 'http://x').searchParams;

// `GET /bench/heap` (both modes): the V8 heap in use after a full collection, for memory per socket.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  collect();
  return { heapUsed: process.memoryUsage().heapUsed };
};

if (mode === 'gateway') {
  const config = loadConfig(process.env, {
    SEED_DEMO: false,
    WORKERS: true,
    WEBHOOK_LOCAL_RECEIVERS: true,
    RATE_LIMIT_PER_MINUTE: 1e9,
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1e9,
  });
  // The pools as `npm start` sizes them (requests, reads, jobs), not one shared pool.
  const database = await openDatabase(
    config.DATABASE_URL
      ? {
          databaseUrl: config.DATABASE_URL,
          connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
          poolSize: config.DATABASE_POOL_SIZE,
          readPoolSize: config.DATABASE_READ_POOL_SIZE,
          jobPoolSize: config.DATABASE_JOB_POOL_SIZE,
        }
      : { pgliteDataDir: 'memory://' },
  );
  const services = createServices(config, database.db, systemClock, () => undefined);
  const stamp = Date.now();
  const owners: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i < users; i++) {
    const user = await services.users.createUser({ email: `events-${i}-${stamp}@example.test` });
    owners.push(user.id);
    keys.push(
      (
        await services.apiKeys.create({
          userId: user.id,
          name: 'bench',
          environment: 'sandbox',
          permission: money ? 'FULL_ACCESS' : 'READ_ONLY',
        })
      ).key,
    );
    if (money)
      await services.db.transaction((tx) =>
        ledger.post(tx, {
          environment: 'sandbox',
          kind: 'bench-funding',
          reference: `events-${stamp}-${i}`,
          lines: [
            { account: systemAccount('sandbox', 'provider_clearing'), amount: -FUNDS },
            { account: walletOf('sandbox', user.id), amount: FUNDS },
          ],
        }),
      );
    if (i < webhookUsers)
      await services.webhooks.create(
        {
          kind: 'api_key',
          credentialId: 'bench',
          userId: user.id,
          environment: 'sandbox',
          abilities: new Set(['READ', 'MANAGE'] as const),
        },
        { url: webhookUrl, eventTypes: ['*'] },
      );
  }
  const app = await buildApp({ services, logger: true });
  app.get('/bench/heap', async () => heapAfterGc());
  app.get('/bench/queued', async () => ({ queued: services.eventFeed.queuedEvents }));
  app.post('/bench/commit', async (request) => {
    const params = query(request.url);
    const userId = owners[Number(params.get('user') ?? 0)]!;
    const n = Number(params.get('n') ?? 1);
    // One transaction writes the n events (one statement, recordEvents), as an operation would.
    const ids = await services.db.transaction(async (tx) =>
      (
        await recordEvents(
          tx,
          Array.from({ length: n }, () => ({
            type: 'transaction.created',
            userId,
            environment: 'sandbox' as const,
            data: {},
          })),
          new Date(),
        )
      ).map((event) => event.id),
    );
    return { ids, committedAt: Date.now() };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const workers = startWorkers(services, app.log);
  ready((app.server.address() as { port: number }).port, keys, owners);
  process.on('SIGTERM', async () => {
    await workers.stop(1000);
    await app.close();
    await database.close();
    process.exit(0);
  });
} else {
  type Event = { id: string; type: string; created: number; data: unknown; seq: number };
  const listeners = new Map<string, Set<(event: Event) => void>>();
  let seq = 0;
  const keys = Array.from({ length: users }, (_, i) => `plain-${i}`);
  // A custom scalar built from SDL passes values through unchanged, as JSON needs here.
  const schema = buildSchema(
    'scalar JSON type Event { id: ID! type: String! created: Float! data: JSON seq: Int! } type Query { ok: Boolean } type Subscription { events: Event! }',
  );
  const roots = {
    subscription: {
      events: async function* (_args: unknown, context: { key: string }) {
        const queue: Event[] = [];
        let wake: (() => void) | undefined;
        const listener = (event: Event) => {
          queue.push(event);
          wake?.();
        };
        const mine = listeners.get(context.key) ?? new Set();
        listeners.set(context.key, mine.add(listener));
        try {
          for (;;) {
            while (queue.length) yield { events: queue.shift()! };
            await new Promise<void>((r) => (wake = r));
          }
        } finally {
          mine.delete(listener);
        }
      },
    },
  };
  const server = createServer((request, response) => {
    if (request.url === '/bench/heap') {
      response.end(JSON.stringify(heapAfterGc()));
      return;
    }
    const params = query(request.url!);
    const key = keys[Number(params.get('user') ?? 0)]!;
    const n = Number(params.get('n') ?? 1);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const event = { id: `evt-${++seq}`, type: 'transaction.created', created: Date.now() / 1000, data: {}, seq };
      ids.push(event.id);
      for (const listener of listeners.get(key) ?? []) listener(event);
    }
    response.end(JSON.stringify({ ids, committedAt: Date.now() }));
  });
  useServer(
    {
      schema,
      roots,
      context: (ctx) => ({ key: String((ctx.connectionParams as { 'x-api-key'?: string })?.['x-api-key']) }),
    },
    new WebSocketServer({ server, path: '/graphql' }),
  );
  server.listen(0, '127.0.0.1', () => ready((server.address() as { port: number }).port, keys));
}

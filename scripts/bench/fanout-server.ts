/**
 * Server side of the subscription fan-out benchmark. `gateway`: the real app (embedded PGlite),
 * events recorded, stamped and announced as in production. `plain`: a bare graphql-ws server whose
 * subscription pushes the same event objects from memory. Both take POST /bench/emit?n=… and print
 * one JSON line when ready.
 */
import { createServer } from 'node:http';
import { buildSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { createServices } from '../../src/services.js';

const mode = process.argv[2];
let seq = 0;
const makeEvent = () => ({
  id: `evt-${++seq}`,
  type: 'transaction.created',
  created: Math.floor(Date.now() / 1000),
  data: { t: Date.now() },
  seq,
});

if (mode === 'gateway') {
  const config = loadConfig(process.env, {
    LOG_LEVEL: 'silent',
    SEED_DEMO: false,
    WORKERS: false,
    RATE_LIMIT_PER_MINUTE: 1e9,
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1e9,
  });
  const database = await openDatabase(
    process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : { pgliteDataDir: 'memory://' },
  );
  const services = createServices(config, database.db, systemClock, () => undefined);
  const user = await services.users.createUser({ email: 'fanout@example.test' });
  const { key } = await services.apiKeys.create({
    userId: user.id,
    name: 'bench',
    environment: 'sandbox',
    permission: 'READ_ONLY',
  });
  const app = await buildApp({ services });
  app.post('/bench/emit', async (request) => {
    const n = Number((request.query as { n?: string }).n ?? 1);
    await services.db.transaction(async (tx) => {
      for (let i = 0; i < n; i++)
        await recordEvent(
          tx,
          { type: 'transaction.created', userId: user.id, environment: 'sandbox', data: { t: Date.now() } },
          new Date(),
        );
    });
    await stampCommittedEvents(services.db, { wait: true });
    services.doorbell.ring();
    return { ok: true };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(
    `${JSON.stringify({ ready: true, pid: process.pid, port: (app.server.address() as { port: number }).port, key })}\n`,
  );
} else {
  const listeners = new Set<(event: ReturnType<typeof makeEvent>) => void>();
  // A custom scalar built from SDL passes values through unchanged, as JSON needs here.
  const schema = buildSchema(
    'scalar JSON type Event { id: ID! type: String! created: Float! data: JSON seq: Int! } type Query { ok: Boolean } type Subscription { events: Event! }',
  );
  const roots = {
    subscription: {
      events: async function* () {
        const queue: Array<ReturnType<typeof makeEvent>> = [];
        let wake: (() => void) | undefined;
        const listener = (event: ReturnType<typeof makeEvent>) => {
          queue.push(event);
          wake?.();
        };
        listeners.add(listener);
        try {
          for (;;) {
            while (queue.length) yield { events: queue.shift()! };
            await new Promise<void>((r) => (wake = r));
          }
        } finally {
          listeners.delete(listener);
        }
      },
    },
  };
  const server = createServer((request, response) => {
    const n = Number(new URL(request.url!, 'http://x').searchParams.get('n') ?? 1);
    for (let i = 0; i < n; i++) {
      const event = makeEvent();
      for (const listener of listeners) listener(event);
    }
    response.end('{"ok":true}');
  });
  useServer({ schema, roots }, new WebSocketServer({ server, path: '/graphql' }));
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(
      `${JSON.stringify({ ready: true, pid: process.pid, port: (server.address() as { port: number }).port, key: 'none' })}\n`,
    );
  });
}

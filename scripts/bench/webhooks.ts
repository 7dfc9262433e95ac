/**
 * npm run bench:webhooks [-- --events 2000 --workers 1]
 *
 * Webhook delivery throughput: records `events` events for an account with one endpoint, then lets
 * `workers` job runners (in this process, on embedded PGlite) deliver them to a local receiver
 * running in a separate process pinned to the other core. Reports deliveries per second and the
 * p50/p99 time from event to receipt.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { createServices } from '../../src/services.js';
import { spawnServer } from './harness/pinning.js';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '2000' }, workers: { type: 'string', default: '1' } },
});
const total = Number(values.events);

// The receiver counts requests and reports latency from the event's own timestamp.
const receiver = spawnServer('scripts/bench/webhook-receiver.ts', [String(total)], { ...process.env });
const lines = createInterface({ input: receiver.stdout! });
const receiverUrl = await new Promise<string>((resolve) => lines.once('line', (line) => resolve(JSON.parse(line).url)));

const database = await openDatabase({ pgliteDataDir: 'memory://' });
const services = createServices(
  loadConfig({}, { NODE_ENV: 'test' }),
  database.db,
  systemClock,
  () => undefined,
  new RateLimiter(undefined),
);
const user = await services.users.createUser({ email: 'webhook-bench@example.test' });
const principal = {
  kind: 'api_key' as const,
  credentialId: 'bench',
  userId: user.id,
  environment: 'sandbox' as const,
  abilities: new Set(['READ', 'MANAGE'] as const),
};
await services.webhooks.create(principal, { url: receiverUrl, eventTypes: ['*'] });
await database.db.transaction(async (tx) => {
  for (let i = 0; i < total; i++)
    await recordEvent(
      tx,
      { type: 'transaction.created', userId: user.id, environment: 'sandbox', data: { t: Date.now() } },
      new Date(),
    );
});

const started = Date.now();
const runners = Array.from(
  { length: Number(values.workers) },
  (_, i) =>
    new JobRunner(database.db, systemClock, [new WebhookDeliveryHandler(database.db, systemClock, services.secrets)], {
      workerId: `bench-${i}`,
      batchSize: 50,
    }),
);
const done = new Promise<{ p50: number; p99: number }>((resolve) =>
  lines.once('line', (line) => resolve(JSON.parse(line))),
);
await Promise.all(
  runners.map(async (runner) => {
    while ((await runner.runDueJobs()) > 0);
  }),
);
const latency = await done;
const seconds = (Date.now() - started) / 1000;
console.log(`| events | workers | deliveries/s | p50 ms (event → receipt) | p99 ms |\n|---|---|---|---|---|`);
console.log(`| ${total} | ${values.workers} | ${Math.round(total / seconds)} | ${latency.p50} | ${latency.p99} |`);
receiver.kill('SIGTERM');
await database.close();
process.exit(0);

/**
 * Forwards your account's events to a local URL, signed like real webhooks, for development.
 *
 *   npm run listen -- --forward-to http://localhost:3000/hooks [--key pgw_sbx_…] [--url ws://localhost:4000/graphql]
 *                     [--types deposit.completed,payout.failed] [--after <seq>] [--secret whsec_…]
 *
 * The key may also come from PGW_API_KEY. It subscribes to `events` over graphql-ws, POSTs each
 * event to --forward-to with `x-service-signature` and the Standard Webhooks headers, and prints
 * one line per event. On a dropped connection it resubscribes after the last `seq` it saw, so no
 * event is missed. Without --secret it makes a signing secret and prints it once.
 */
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { generateWebhookSecret, signatureHeaders } from '../src/domain/webhooks/signing.js';

const { values } = parseArgs({
  options: {
    'forward-to': { type: 'string' },
    key: { type: 'string', default: process.env.PGW_API_KEY },
    url: { type: 'string', default: 'ws://localhost:4000/graphql' },
    types: { type: 'string' },
    after: { type: 'string' },
    secret: { type: 'string' },
  },
});

const forwardTo = values['forward-to'];
if (!forwardTo || !values.key) {
  process.stderr.write(
    'Usage: npm run listen -- --forward-to http://localhost:3000/hooks --key <API key> (or PGW_API_KEY)\n',
  );
  process.exit(2);
}
const secret = values.secret ?? generateWebhookSecret();
if (!values.secret) process.stdout.write(`Signing secret for this session (verify with it): ${secret}\n`);
const types = values.types
  ?.split(',')
  .map((t) => t.trim())
  .filter(Boolean);
let lastSeq = values.after === undefined ? undefined : Number(values.after);

const client = createClient({
  url: values.url!,
  webSocketImpl: WebSocket,
  connectionParams: { 'x-api-key': values.key },
  retryAttempts: Infinity,
  lazy: false,
});

interface StreamedEvent {
  id: string;
  type: string;
  created: number;
  data: Record<string, unknown>;
  seq: number;
}

async function forward(event: StreamedEvent): Promise<void> {
  const body = JSON.stringify({ id: event.id, type: event.type, created: event.created, data: event.data });
  const started = Date.now();
  try {
    const response = await fetch(forwardTo!, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        ...signatureHeaders({ eventId: event.id, body, at: new Date(), secret }),
      },
      signal: AbortSignal.timeout(10_000),
    });
    process.stdout.write(
      `${new Date().toISOString()}  ${event.type}  ${event.id}  → ${response.status} (${Date.now() - started} ms)\n`,
    );
  } catch (error) {
    process.stdout.write(
      `${new Date().toISOString()}  ${event.type}  ${event.id}  → failed: ${(error as Error).message}\n`,
    );
  }
}

function subscribe(): void {
  const args = [types ? `types: ${JSON.stringify(types)}` : '', lastSeq !== undefined ? `after: ${lastSeq}` : '']
    .filter(Boolean)
    .join(', ');
  const query = `subscription { events${args ? `(${args})` : ''} { id type created data seq } }`;
  let chain = Promise.resolve();
  client.subscribe<{ events: StreamedEvent }>(
    { query },
    {
      next: (message) => {
        if (message.errors) {
          process.stderr.write(`Subscription refused: ${message.errors.map((e) => e.message).join('; ')}\n`);
          process.exit(1);
        }
        const event = message.data?.events;
        if (!event) return;
        lastSeq = event.seq;
        // Forward in order, one at a time.
        chain = chain.then(() => forward(event));
      },
      error: (error) => {
        process.stderr.write(
          `Connection lost (${String((error as Error).message ?? error)}); resuming after seq ${lastSeq ?? 'now'}\n`,
        );
        setTimeout(subscribe, 1000);
      },
      complete: () => setTimeout(subscribe, 1000),
    },
  );
}

process.stdout.write(`Forwarding events from ${values.url} to ${forwardTo}. Ctrl-C to stop.\n`);
subscribe();

/**
 * Forwards your account's events to a local URL, signed like real webhooks, for development.
 *
 *   npm run listen -- --forward-to http://localhost:3000/hooks [--key pgw_sbx_…] [--url ws://localhost:4000/graphql]
 *                     [--types deposit.completed,payout.failed] [--after <seq>] [--secret whsec_…]
 *
 * The key may also come from PGW_API_KEY. Without --url it follows the server's own settings:
 * PUBLIC_URL when set, else localhost on PORT (default 4000). A server it cannot reach is one line
 * and exit code 1, not a retry loop. It subscribes to `events` over graphql-ws, POSTs each
 * event to --forward-to with `x-service-signature` and the Standard Webhooks headers, and prints
 * one line per event. On a dropped connection it resubscribes after the last `seq` it saw, so no
 * event is missed. Without --secret it makes a signing secret and prints it once.
 */
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { generateWebhookSecret, signatureHeaders } from '../src/domain/webhooks/signing.js';

/** The server's GraphQL WebSocket from the same variables the server reads. */
function serverUrl(env: NodeJS.ProcessEnv): string {
  const publicUrl = env.PUBLIC_URL?.trim().replace(/\/+$/, '');
  if (publicUrl) return `${publicUrl.replace(/^http/, 'ws')}/graphql`;
  return `ws://localhost:${env.PORT?.trim() || 4000}/graphql`;
}

const USAGE =
  'Usage: npm run listen -- --forward-to http://localhost:3000/hooks --key <API key> (or PGW_API_KEY) [--url ws://localhost:4000/graphql] [--types a,b] [--after <seq>] [--secret whsec_…]';

const OPTIONS = {
  help: { type: 'boolean', short: 'h', default: false },
  'forward-to': { type: 'string' },
  key: { type: 'string', default: process.env.PGW_API_KEY },
  url: { type: 'string', default: serverUrl(process.env) },
  types: { type: 'string' },
  after: { type: 'string' },
  secret: { type: 'string' },
} as const;
let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>;
try {
  parsed = parseArgs({ options: OPTIONS });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const forwardTo = values['forward-to'];
if (!forwardTo || !values.key) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
const secret = values.secret ?? generateWebhookSecret();
if (!values.secret) process.stdout.write(`Signing secret for this session (verify with it): ${secret}\n`);
const types = values.types
  ?.split(',')
  .map((t) => t.trim())
  .filter(Boolean);
let lastSeq = values.after === undefined ? undefined : Number(values.after);

let connected = false;
const client = createClient({
  url: values.url!,
  webSocketImpl: WebSocket,
  connectionParams: { 'x-api-key': values.key },
  retryAttempts: Infinity,
  lazy: false,
  // Never reached the server: say so once and stop, rather than retrying in silence.
  shouldRetry: () => connected,
  on: {
    connected: () => {
      connected = true;
    },
    error: (error) => {
      if (connected) return;
      const reason = (error as { message?: string }).message || (error as { code?: string }).code || 'no answer';
      process.stderr.write(
        `Cannot connect to ${values.url} (${reason}): is the server running? Set --url, or PORT / PUBLIC_URL as the server has them.\n`,
      );
      process.exit(1);
    },
  },
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

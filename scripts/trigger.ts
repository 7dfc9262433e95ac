/**
 * Fires one event kind for your sandbox account, as `POST /api/v1/events/sandbox/trigger` does:
 * the gateway runs the sandbox operation that emits it, and this prints the events it caused.
 *
 *   npm run trigger -- payout.failed [--key pgw_sbx_…] [--url http://localhost:4000] [--idempotency-key <key>]
 *
 * The key may also come from PGW_API_KEY (a sandbox key with Transactions or Full Access). Without
 * --url it follows the server's own settings, as `npm run listen` does: PUBLIC_URL when set, else
 * localhost on PORT (default 4000). Exit code 0 when the event was fired, 1 when the gateway
 * refused or could not be reached (one line saying why), 2 for a command line it cannot read.
 */
import { parseArgs } from 'node:util';

/** The server's base URL from the same variables the server reads. */
function serverUrl(env: NodeJS.ProcessEnv): string {
  const publicUrl = env.PUBLIC_URL?.trim().replace(/\/+$/, '');
  if (publicUrl) return publicUrl;
  return `http://localhost:${env.PORT?.trim() || 4000}`;
}

const USAGE =
  'Usage: npm run trigger -- <event kind, e.g. payout.failed> [--key <sandbox API key> (or PGW_API_KEY)] [--url http://localhost:4000] [--idempotency-key <key>]';

const OPTIONS = {
  help: { type: 'boolean', short: 'h', default: false },
  key: { type: 'string', default: process.env.PGW_API_KEY },
  url: { type: 'string', default: serverUrl(process.env) },
  'idempotency-key': { type: 'string' },
} as const;
let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
try {
  parsed = parseArgs({ options: OPTIONS, allowPositionals: true });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const [kind, ...extra] = positionals;
if (!kind || extra.length > 0 || !values.key) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

interface Triggered {
  type: string;
  eventId: string;
  events: Array<{ id: string; type: string }>;
  references: string[];
  description: string;
}

const url = `${values.url!.replace(/\/+$/, '')}/api/v1/events/sandbox/trigger`;
let response: Response;
try {
  response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': values.key,
      ...(values['idempotency-key'] ? { 'idempotency-key': values['idempotency-key'] } : {}),
    },
    body: JSON.stringify({ type: kind }),
    signal: AbortSignal.timeout(60_000),
  });
} catch (error) {
  const reason = ((error as Error).cause as { code?: string } | undefined)?.code ?? (error as Error).message;
  process.stderr.write(
    `Cannot connect to ${values.url} (${reason}): is the server running? Set --url, or PORT / PUBLIC_URL as the server has them.\n`,
  );
  process.exit(1);
}
const body = (await response.json().catch(() => ({}))) as { data?: Triggered; message?: string };
if (!response.ok || !body.data) {
  process.stderr.write(`${response.status}: ${body.message ?? response.statusText}\n`);
  process.exit(1);
}
const triggered = body.data;
process.stdout.write(`Triggered ${triggered.type}: ${triggered.eventId}\n${triggered.description}\n`);
process.stdout.write(`Events (${triggered.events.length}, in the order written):\n`);
const width = Math.max(...triggered.events.map((event) => event.type.length));
for (const event of triggered.events) {
  process.stdout.write(`  ${event.type.padEnd(width)}  ${event.id}${event.id === triggered.eventId ? '  ←' : ''}\n`);
}
process.stdout.write(`References: ${triggered.references.join(', ')}\n`);

/**
 * A facade under load in `npm run bench`: the real app with GATEWAY_MODE=facade in front of the
 * bench's gateway (UPSTREAM_URL, the gateway process's own port), at its default logging, on a
 * database of its own (its events and webhook endpoints; the upstream holds the users and keys).
 * Checks that the bench's key answers `me` through it on REST and GraphQL, then prints one JSON
 * line: `{"ready":true,"pid":…,"port":…}`.
 */
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { ME_QUERY } from './documents.js';

const config = loadConfig(process.env, {
  GATEWAY_MODE: 'facade',
  // The bench's gateway listens on 127.0.0.1 over http.
  UPSTREAM_PRIVATE_ADDRESSES: true,
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
  UPSTREAM_CALLS_PER_MINUTE: 1_000_000_000,
});
const key = process.env.BENCH_KEY;
if (!key) throw new Error('facade-server.ts needs BENCH_KEY: a key the upstream knows');
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: 'memory://' });
const services = createServices(config, database.db, systemClock, () => undefined);
const app = await buildApp({ services, logger: true });
await app.listen({ port: 0, host: '127.0.0.1' });
const port = (app.server.address() as { port: number }).port;

// A bench that measured an error path would measure nothing: both targets must answer.
const rest = await fetch(`http://127.0.0.1:${port}/api/v1/user/me`, { headers: { 'x-api-key': key } });
if (rest.status !== 200) throw new Error(`facade REST me: ${rest.status} ${await rest.text()}`);
const graphql = await fetch(`http://127.0.0.1:${port}/graphql`, {
  method: 'POST',
  headers: { 'x-api-key': key, 'content-type': 'application/json' },
  body: JSON.stringify({ query: ME_QUERY }),
});
const answer = await graphql.text();
if (graphql.status !== 200 || (JSON.parse(answer) as { errors?: unknown }).errors)
  throw new Error(`facade /graphql me: ${graphql.status} ${answer}`);

process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, port })}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await database.close();
  process.exit(0);
});

/**
 * The gateway under load in `npm run bench`: the real app at its default logging (LOG_LEVEL=info,
 * one line per request), on the PostgreSQL database DATABASE_URL names, which the standalone peers
 * read too. Seeds one user with every field of `User` set, a key, money movements for the home
 * screen (a deposit, a bill, transfers) and 20 bill records, then prints one JSON line:
 * `{"ready":true,"pid":…,"port":…,"control":…,"key":"…","statements":{…}}` (`control`: the port that
 * switches the log level, `statements`: SQL statements per bench request).
 */
import { createServer } from 'node:http';
import { sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { BILL_PAGE, HOME_SCREEN, ME_QUERY } from './documents.js';
import { onEveryPoolQuery } from './pool-queries.js';

const config = loadConfig(process.env, {
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: 'memory://' });
const services = createServices(config, database.db, systemClock, () => undefined);
const stamp = Date.now();
const user = await services.users.createUser({
  email: `bench-${stamp}@example.test`,
  firstName: 'Bench',
  lastName: 'Mark',
});
const other = await services.users.createUser({ email: `bench-other-${stamp}@example.test` });
// Every nullable field set, so each of the 20 fields is serialised with a value.
await services.db.execute(sql`
  update users set phone = '+2348031234567', dob = '1990-01-31', device_id = 'device-1', device_ip = '10.0.0.7',
    device_model = 'Pixel 8', platform = 'android', last_logged_in = now(), verified = true
  where id = ${user.id}`);
const { key } = await services.apiKeys.create({
  userId: user.id,
  name: 'bench',
  environment: 'sandbox',
  permission: 'FULL_ACCESS',
});

const app = await buildApp({ services, logger: true });
await app.listen({ port: 0, host: '127.0.0.1' });
const port = (app.server.address() as { port: number }).port;
/**
 * A request over the socket, as the bench's load arrives. Not app.inject: its stand-in request and
 * response objects, which production never sees, would leave the HTTP code's call sites (Node's,
 * Fastify's, the gateway's hooks) expecting more than one shape for the rest of the run.
 */
const send = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { 'x-api-key': key, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  return { statusCode: response.status, body: await response.text() };
};
const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
  const response = await send(method, url, payload);
  if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  return response;
};
// The home screen's movements: a deposit, a bill and transfers, ten in all.
await call('POST', '/api/v1/wallet/sandbox/virtual-account/transfer', { amount: 5000 });
await call('POST', '/api/v1/bills/buy-airtime', {
  phoneNumber: '08031234567',
  biller: 'mtn',
  amount: 200,
  reference: `AIR-${stamp}`,
});
for (let i = 0; i < 8; i++)
  await call('POST', '/graphql', {
    query: `mutation { transfer(input: { amount: 25, recipient: "${other.email}", reference: "TR-${stamp}-${i}" }) { id } }`,
  });
// A page of 20 bill records (the one above and 19 more).
await services.db.execute(sql`
  insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider, tx_ref, created_at, updated_at)
  select ${user.id}, 'sandbox', 'BENCH-' || g, 'BIL099', 'AT099', '0803' || lpad(g::text, 7, '0'), 10000, 0,
    'AIRTIME'::bill_type, 'SUCCESS'::bill_status, 'MTN Airtime', 'sandbox', 'SBX-' || g,
    now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
  from generate_series(1, 19) g`);

// SQL statements per request, user cache cold (the key's cache is warm after the first request).
let counted = 0;
const stopCounting = onEveryPoolQuery(
  services.db,
  (query) =>
    function (this: unknown, ...args: unknown[]) {
      counted += 1;
      return query.apply(this, args);
    },
);
const statementsOf = async (request: () => Promise<unknown>) => {
  await request();
  services.users.forget(user.id);
  counted = 0;
  await request();
  return counted;
};
const graphql = (document: string) => async () => {
  const response = await send('POST', '/graphql', { query: document });
  // A document that answers errors measures the error path, not the query: refuse to run.
  const body = JSON.parse(response.body) as { errors?: unknown[] };
  if (response.statusCode !== 200 || body.errors) throw new Error(`bench document failed: ${response.body}`);
  return response;
};
const statements = {
  'REST me': await statementsOf(() => call('GET', '/api/v1/user/me')),
  '/graphql me': await statementsOf(graphql(ME_QUERY)),
  '20 bill records': await statementsOf(graphql(BILL_PAGE)),
  'home screen': await statementsOf(graphql(HOME_SCREEN)),
};
stopCounting();

// The bench switches this process's log level between rounds (`POST /level/warn`, `/level/info` on
// this port), so the cost of the default level is also measured on one process with one history;
// and, the same way, whether a key's requests go into the dashboard's request log (`POST
// /request-log/off`, `/request-log/on`): off, the log's `record` does nothing, so what the rounds
// differ by is the ring's work per request (the entry's few fields are still gathered).
const recordRequest = services.requestLog.record;
const control = createServer((request, response) => {
  const url = request.url ?? '';
  const requestLog = /^\/request-log\/(on|off)$/.exec(url)?.[1];
  if (requestLog) {
    services.requestLog.record = requestLog === 'on' ? recordRequest : () => undefined;
    response.end(requestLog);
    return;
  }
  const level = /^\/level\/(info|warn)$/.exec(url)?.[1];
  if (level) app.log.level = level;
  response.end(app.log.level);
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));

process.stdout.write(
  `${JSON.stringify({
    ready: true,
    pid: process.pid,
    port,
    control: (control.address() as { port: number }).port,
    key,
    statements,
  })}\n`,
);
process.on('SIGTERM', async () => {
  control.close();
  await app.close();
  await database.close();
  process.exit(0);
});

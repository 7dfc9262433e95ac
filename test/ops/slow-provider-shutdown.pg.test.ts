import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant, type Tenant } from '../helpers/app.js';
import { type Child, spawnTs, killChildren } from '../helpers/child.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { MetricsText } from '../helpers/metrics-text.js';
import { waitUntil } from '../helpers/wait.js';

const PAYOUTS = 200;
const EACH_KOBO = 10_000 + 2_500;
const FUNDED_KOBO = 5_000_000;

interface Answer {
  status: number;
  body: string;
}

/** One request on a connection of its own; a connection cut answers status 0 with the error. */
function post(url: string, key: string, path: string, body: object, idempotencyKey?: string): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = JSON.stringify(body);
    const request = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'x-api-key': key,
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on('error', (error) => resolve({ status: 0, body: String(error) }));
      },
    );
    request.on('error', (error) => resolve({ status: 0, body: String(error) }));
    request.end(payload);
  });
}

/**
 * SIGTERM to a gateway (the bundle, as `npm start` runs it, default pools) while 200 concurrent
 * payouts of one API key to the 3 s sandbox account are under way, some at the provider and some
 * still being opened: every one is answered 201 and completed, the wallet and ledger are exact,
 * and the process exits 0. Payout limits as in test/wallet/slow-provider.pg.test.ts (production's
 * defaults for sandbox keys, 1,000 an hour). The grace is 60 s (the default 10 s bounds a burst
 * that, on two loaded cores, can take longer), and readiness answers 503 for 2 s before the
 * listener closes, as a deployment's balancer needs (production's default is 5 s).
 */
describe.skipIf(!onPostgres)('SIGTERM during a burst of slow payouts (PostgreSQL)', () => {
  let databaseUrl: string;
  let database: DatabaseHandle;
  let services: Services;
  let tenant: Tenant;
  const children: Child[] = [];

  beforeAll(async () => {
    databaseUrl = await isolatedTestDatabaseUrl();
    database = await openDatabase({ databaseUrl, poolSize: 2 });
    services = await createTestServices(database.db);
    tenant = await seedTenant(services);
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await database?.close();
  });

  it('cuts nothing: all 200 answered 201 and completed, the ledger exact, exit 0', async () => {
    const child = spawnTs('src/main.ts', [], {
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      WORKERS: 'true',
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      PAYOUT_LIMITS_SANDBOX: 'true',
      PAYOUT_LIMIT_HOURLY_COUNT: '1000',
      SHUTDOWN_READINESS_DELAY_MS: '2000',
    });
    children.push(child);
    const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 90_000);
    const key = tenant.keys.TRANSACTIONS;
    const funded = await post(url!, key, '/api/v1/wallet/sandbox/virtual-account/transfer', {
      amount: FUNDED_KOBO / 100,
    });
    expect(funded.status).toBe(201);

    const started = Date.now();
    const answers = Array.from({ length: PAYOUTS }, (_, i) =>
      post(
        url!,
        key,
        '/api/v1/wallet/withdraw',
        { amount: 100, bankCode: '044', accountNumber: SANDBOX_PAYMENTS.payouts.slowAccount, reference: `TERM-${i}` },
        `term-${i}`,
      ).then((answer) => ({ ...answer, ms: Date.now() - started })),
    );
    // Signalled once payouts are at the provider: the burst is under way, some past their first
    // commit and some not yet.
    await waitUntil(async () => {
      const text = await fetch(`${url}/metrics`).then((r) => r.text());
      return MetricsText.parse(text).sum('gateway_provider_calls_in_flight', { provider: 'sandbox' }) > 0;
    });
    const signalledMs = Date.now() - started;
    child.process.kill('SIGTERM');
    const answered = await Promise.all(answers);
    const code = await child.exited;

    const cut = answered.filter((a) => a.status !== 201);
    expect(cut, JSON.stringify(cut.slice(0, 3))).toEqual([]);
    expect(answered.every((a) => JSON.parse(a.body).data.status === 'completed')).toBe(true);
    expect(code).toBe(0);
    expect(child.output()).not.toMatch(/did not finish within the grace/);
    expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({
      available: BigInt(FUNDED_KOBO - PAYOUTS * EACH_KOBO),
      held: 0n,
    });
    expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
    const ms = answered.map((a) => a.ms).sort((a, b) => a - b);
    console.log(
      `[slow provider shutdown figures] ${JSON.stringify({ payouts: PAYOUTS, signalledMs, slowestMs: ms.at(-1), medianMs: ms[PAYOUTS >> 1], exitCode: code })}`,
    );
  });
});

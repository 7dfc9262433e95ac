import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';
import { type Child, killChildren, spawnTs } from '../helpers/child.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { principalOf } from '../helpers/principal.js';
import { waitUntil } from '../helpers/wait.js';

const ETH = 10n ** 18n;
const USDC = 10n ** 6n;

/**
 * The EVM send's promise under a crash: the signed transaction is committed before it is sent, so
 * a gateway SIGKILLed after signing and before the chain saw it leaves a stored transaction that the
 * next gateway sends (the same bytes, never re-signed), and it is mined once.
 */
describe.skipIf(!onPostgres)('an EVM send killed between signing and sending (PostgreSQL)', () => {
  let services: Services;
  const children: Child[] = [];
  beforeAll(async () => {
    services = await createTestServices();
  });
  afterEach(() => killChildren(children));
  afterAll(() => killChildren(children));

  async function gateway(workers: boolean): Promise<{ child: Child; url: string }> {
    const child = spawnTs('src/main.ts', [], {
      DATABASE_URL: testDatabaseUrl(),
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: 'false',
      WORKERS: String(workers),
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
    });
    children.push(child);
    const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 60_000);
    return { child, url: url! };
  }

  const send = (url: string, key: string, body: object, idempotencyKey: string) =>
    fetch(`${url}/api/v1/evm/base/send-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
    });

  it('the stored transaction is sent after the restart, its own bytes, and mined once', async () => {
    const sender = await seedTenant(services);
    const recipient = await seedTenant(services);
    const from = (await services.evmWallets.walletOf(principalOf(sender.user.id))).address;
    const to = (await services.evmWallets.walletOf(principalOf(recipient.user.id))).address;
    const chain = services.evmChains.sandboxFor('base');
    await chain.faucet(from, { native: true }, ETH);
    await chain.faucet(from, { token: 'USDC' }, 10n * USDC);
    const usdc = chain.tokenAddress('USDC');

    const { child, url } = await gateway(false);
    // Holds the mempool's table: the child commits the signed send, then waits at the chain's door.
    const blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('lock table evm_sandbox_mempool in exclusive mode');
    const body = { token: 'USDC', to, amount: '3' };
    try {
      void send(url, sender.keys.TRANSACTIONS, body, 'evm-crash-1').catch(() => undefined);
      await waitUntil(async () => {
        const [row] = await queryRows<{ n: number }>(
          services.db,
          sql`select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and datname = current_database() and query ilike '%evm_sandbox_mempool%'`,
        );
        return (row?.n ?? 0) > 0;
      }, 30_000);
      child.process.kill('SIGKILL');
      await child.exited;
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }

    // Signed and stored with its hold, and the chain never saw it.
    const stored = await queryRows<{ id: string; status: string; tx_hash: string; nonce: string }>(
      services.db,
      sql`select id, status::text, tx_hash, nonce::text from chain_sends where family = 'evm' and from_address = ${from}`,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ status: 'pending', nonce: '0' });
    const hash = stored[0]!.tx_hash;
    expect(await chain.receipt(hash)).toBeUndefined();
    expect(await chain.tokenBalance(to, usdc)).toBe(0n);

    // The next gateway's confirmation job sends the stored bytes; the chain mines them once.
    const restarted = await gateway(true);
    await waitUntil(async () => {
      const [row] = await queryRows<{ status: string }>(
        services.db,
        sql`select status::text from chain_sends where id = ${stored[0]!.id}`,
      );
      return row?.status === 'confirmed';
    }, 60_000);
    expect((await chain.receipt(hash))?.status).toBe('success');
    expect(await chain.tokenBalance(to, usdc)).toBe(3n * USDC);
    expect(await chain.tokenBalance(from, usdc)).toBe(7n * USDC);
    expect(await chain.transactionCount(from)).toBe(1n);

    // The partner's retry with the same key is answered with that send, and nothing new is signed.
    const again = await send(restarted.url, sender.keys.TRANSACTIONS, body, 'evm-crash-1');
    expect(again.status).toBe(201);
    const answer = (await again.json()) as { data: { hash: string; status: string; nonce: string } };
    expect(answer.data).toMatchObject({ hash, status: 'confirmed', nonce: '0' });
    const sends = await queryRows<{ n: number }>(
      services.db,
      sql`select count(*)::int as n from chain_sends where family = 'evm' and from_address = ${from}`,
    );
    expect(sends[0]!.n).toBe(1);
    expect(await chain.transactionCount(from)).toBe(1n);

    // Each of the send's holds (the token and the gas) ended once: captured, none left open.
    const holds = await queryRows<{ state: string; n: number }>(
      services.db,
      sql`select status::text as state, count(*)::int as n from asset_holds where send_id = ${stored[0]!.id} group by status`,
    );
    expect(holds).toEqual([{ state: 'captured', n: 2 }]);
  });
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { startWorkers, type Workers } from '../../src/workers.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The arrival watch of a running instance: this process's own sends and faucet grants ring it, so an
 * arrival is told at once instead of on the watch's backed-off wait (up to 30 s when idle).
 */
describe('the EVM arrival watch', () => {
  let s: StartedTestApp;
  let workers: Workers | undefined;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(async () => {
    await workers?.stop(1_000);
    await s.t.close();
  });

  it('is rung by every send, faucet grant and mempool release the process has mined', async () => {
    let rings = 0;
    const stop = s.t.services.evmIncoming.onRing(() => rings++);
    const chain = s.t.services.evmChains.sandboxFor('optimism');
    await chain.faucet('0x000000000000000000000000000000000000dEaD', { token: 'USDC' }, 5n);
    expect(rings).toBe(1);
    await chain.mempool.pause();
    await chain.mempool.release();
    expect(rings).toBe(2);
    stop();
  });

  it('tells a faucet grant to a custodial wallet through the running workers', async () => {
    workers = startWorkers(s.t.services, s.t.app.log);
    const tenant = await seedTenant(s.t.services);
    const address = (
      await s.t.app.inject({ url: '/api/v1/evm/address', headers: { 'x-api-key': tenant.keys.READ_ONLY } })
    ).json().data.address as string;
    const chain = s.t.services.evmChains.sandboxFor('base');
    await chain.faucet(address, { token: 'USDC' }, 3_000_000n);
    await waitUntil(async () => {
      const told = await queryRows(
        s.t.services.db,
        sql`select 1 from events where user_id = ${tenant.user.id}::uuid and type = 'transaction.completed'
            and data->>'type' = 'CRYPTO_DEPOSIT'`,
      );
      return told.length === 1;
    });
  });

  it('tells native coin arriving from another sandbox wallet once, with the native symbol', async () => {
    const addressOf = async (key: string) =>
      (await s.t.app.inject({ url: '/api/v1/evm/address', headers: { 'x-api-key': key } })).json().data
        .address as string;
    const sender = await seedTenant(s.t.services);
    const recipient = await seedTenant(s.t.services);
    const chain = s.t.services.evmChains.sandboxFor('scroll');
    await chain.faucet(await addressOf(sender.keys.READ_ONLY), { native: true }, 10n ** 17n);
    const to = await addressOf(recipient.keys.READ_ONLY);
    const sent = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/evm/scroll/send-native',
      headers: { 'x-api-key': sender.keys.TRANSACTIONS, 'idempotency-key': 'native-arrival-1' },
      payload: { to, amount: '0.01' },
    });
    expect(sent.statusCode, sent.body).toBe(201);
    const hash = sent.json().data.hash as string;
    const toldOf = () =>
      queryRows<{ data: Record<string, unknown> }>(
        s.t.services.db,
        sql`select data from events where user_id = ${recipient.user.id}::uuid and type = 'transaction.completed'
            and data->>'type' = 'CRYPTO_DEPOSIT' and data->>'hash' = ${hash}`,
      );
    await waitUntil(async () => (await toldOf()).length === 1);
    await s.t.services.evmIncoming.poll();
    const told = await toldOf();
    expect(told).toHaveLength(1);
    expect(told[0]!.data).toMatchObject({
      asset: 'ETH',
      token: null,
      amount: '0.01',
      amountRaw: (10n ** 16n).toString(),
      reference: `${hash}:native`,
      to,
    });
  });
});

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
});

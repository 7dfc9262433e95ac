import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { TransactionRejected } from '../../src/domain/chain/chain-adapter.js';
import type { EvmSandboxChain } from '../../src/domain/evm/evm-chain.js';
import { EvmChains } from '../../src/domain/evm/evm-chains.js';
import { EvmTransfers } from '../../src/domain/evm/evm-transfers.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

const ETH = 10n ** 18n;

/**
 * The two endings of an EVM send besides mined (docs/evm.md#endings), on the sandbox chain: one the
 * chain refuses before taking it fails at once and its nonce gets a cancel; one the mempool drops is
 * replaced by a cancel at a higher fee and ends `replaced` when the cancel lands.
 */
describe('EVM send endings', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(() => s.t.close());

  const principalOf = async (): Promise<Principal> => ({
    kind: 'api_key',
    credentialId: 't',
    userId: (await seedTenant(s.t.services)).user.id,
    environment: 'sandbox',
    abilities: abilitiesOf('FULL_ACCESS'),
  });
  /** The service's transfers over `chains`, replacing a send as soon as it is not mined. */
  const transfersOver = (chains: EvmChains) =>
    new EvmTransfers(
      s.t.services.db,
      s.t.services.clock,
      s.t.services.idempotency,
      s.t.services.evmWallets,
      chains,
      300,
      0,
    );
  const holdsOf = (sendId: string) =>
    queryRows<{ asset: string; status: string }>(
      s.t.services.db,
      sql`select asset, status::text from asset_holds where send_id = ${sendId}::uuid order by asset`,
    );
  const eventsOf = (userId: string, hash: string) =>
    queryRows<{ type: string }>(
      s.t.services.db,
      sql`select type from events where user_id = ${userId}::uuid and data->>'hash' = ${hash} order by created_at, type`,
    );

  it('a send the chain refuses fails at once, its holds released, and a cancel fills its nonce', async () => {
    const real = s.t.services.evmChains.sandboxFor('optimism');
    // The sandbox chain, refusing the first transaction it is sent as a node under pressure might.
    let refusals = 1;
    const refusing = new Proxy(real, {
      get(target, property, receiver) {
        if (property === 'sendRaw')
          return (wire: Uint8Array) =>
            refusals-- > 0 ? Promise.reject(new TransactionRejected('txpool is full')) : target.sendRaw(wire);
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as EvmSandboxChain;
    const transfers = transfersOver(new EvmChains(() => refusing));
    const sender = await principalOf();
    const wallet = await s.t.services.evmWallets.walletOf(sender);
    await real.faucet(wallet.address, { native: true }, ETH);
    const to = (await s.t.services.evmWallets.walletOf(await principalOf())).address;

    const failed = await transfers.sendNative(sender, 'optimism', { to, amount: '0.1' }, undefined);
    expect(failed).toMatchObject({ status: 'failed', nonce: 0n, error: 'Rejected by the network: txpool is full' });
    expect(await holdsOf(failed.id)).toEqual([{ asset: 'native', status: 'released' }]);
    expect((await eventsOf(sender.userId, failed.hash)).map((e) => e.type)).toEqual([
      'transaction.created',
      'transaction.failed',
    ]);

    // Its nonce went to a cancel (a 0-value transfer to itself), never to other content: the cancel lands.
    const [cancel] = await queryRows<{ id: string; nonce: string; amount_raw: string; to_address: string }>(
      s.t.services.db,
      sql`select id, nonce::text, amount_raw::text, to_address from chain_sends where replaces = ${failed.id}::uuid`,
    );
    expect(cancel).toMatchObject({ nonce: '0', amount_raw: '0', to_address: wallet.address });
    expect(await transfers.confirm(cancel!.id)).toBe('final');
    expect(await real.transactionCount(wallet.address)).toBe(1n);
    expect(await real.nativeBalance(to)).toBe(0n);

    // The wallet's next send takes the next nonce and lands.
    const next = await transfers.sendNative(sender, 'optimism', { to, amount: '0.1' }, undefined);
    expect(next).toMatchObject({ status: 'confirmed', nonce: 1n });
    expect(await real.nativeBalance(to)).toBe(ETH / 10n);
  });

  it('a send the mempool drops is replaced by a cancel at a higher fee, and ends replaced when it lands', async () => {
    const chain = s.t.services.evmChains.sandboxFor('scroll');
    const transfers = transfersOver(s.t.services.evmChains);
    const sender = await principalOf();
    const wallet = await s.t.services.evmWallets.walletOf(sender);
    await chain.faucet(wallet.address, { native: true }, ETH);
    await chain.faucet(wallet.address, { token: 'USDT' }, 50_000_000n);
    const to = (await s.t.services.evmWallets.walletOf(await principalOf())).address;

    await chain.mempool.pause();
    try {
      const sent = await transfers.sendToken(sender, 'scroll', 'USDT', { to, amount: '20' }, undefined);
      expect(sent.status).toBe('pending');
      await chain.mempool.drop([sent.hash]);
      // Not mined: the job's step replaces it with a cancel at a higher fee (held, so not yet mined either).
      expect(await transfers.confirm(sent.id)).toBe('pending');
      const [cancel] = await queryRows<{ id: string; tx_hash: string }>(
        s.t.services.db,
        sql`select id, tx_hash from chain_sends where replaces = ${sent.id}::uuid`,
      );
      expect(await chain.mempool.pending()).toEqual([cancel!.tx_hash]);
      await chain.mempool.release();
      expect(await transfers.confirm(sent.id)).toBe('final');
      const after = await transfers.byHash(sender, sent.hash);
      expect(after.status).toBe('replaced');
      expect((await transfers.byHash(sender, cancel!.tx_hash)).status).toBe('confirmed');
      // Nothing it asked for happened: its token and fee holds came back; the cancel's fee was spent.
      expect(await holdsOf(sent.id)).toEqual(
        [
          { asset: chain.tokenAddress('USDT'), status: 'released' },
          { asset: 'native', status: 'released' },
        ].sort((a, b) => a.asset.localeCompare(b.asset)),
      );
      expect(await holdsOf(cancel!.id)).toEqual([{ asset: 'native', status: 'captured' }]);
      expect(await chain.tokenBalance(wallet.address, chain.tokenAddress('USDT'))).toBe(50_000_000n);
      expect((await eventsOf(sender.userId, sent.hash)).map((e) => e.type)).toEqual([
        'transaction.created',
        'transaction.failed',
      ]);
    } finally {
      await chain.mempool.release();
    }
  });
});

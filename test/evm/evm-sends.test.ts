import { createTxFromRLP } from '@ethereumjs/tx';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { TRANSFER_TOPIC } from '../../src/domain/evm/evm-incoming.js';
import { evmSendStore } from '../../src/domain/evm/evm-send-store.js';
import { SandboxEvmChain } from '../../src/domain/evm/sandbox-chain.js';
import { evmChainRows } from '../../src/domain/evm/sandbox-chain-rows.js';
import { commonOf } from '../../src/domain/evm/sandbox-vm.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

const ETH = 10n ** 18n;
const USDC = 10n ** 6n;
const TRANSFER_FIELDS = 'id hash status kind asset token amount amountRaw nonce maxFeeRaw error';

/**
 * EVM wallets on the sandbox's own chains (ethereumjs running the compiled ERC-20s), over REST and
 * GraphQL: the faucet's coins show in the balances, sends move the contract's balances and emit its
 * Transfer logs, short balances are refused naming what is spendable, arrivals are told once, and a
 * keyed send is signed once.
 */
describe('EVM wallets on the sandbox chains', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(() => s.t.close());

  const chain = () => s.t.services.evmChains.sandboxFor('base');
  const get = async (key: string, url: string) => {
    const response = await s.t.app.inject({ url, headers: { 'x-api-key': key } });
    return { status: response.statusCode, body: response.json() };
  };
  const post = async (key: string, url: string, payload: object, idempotencyKey?: string) => {
    const response = await s.t.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': key, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      payload,
    });
    return { status: response.statusCode, body: response.json() };
  };
  /** A tenant with a wallet funded by the sandbox faucet. */
  const funded = async (native: bigint, usdc: bigint) => {
    const tenant = await seedTenant(s.t.services);
    const { address } = (await get(tenant.keys.READ_ONLY, '/api/v1/evm/address')).body.data;
    if (native > 0n) await chain().faucet(address, { native: true }, native);
    if (usdc > 0n) await chain().faucet(address, { token: 'USDC' }, usdc);
    return { tenant, address: address as string };
  };

  it('lists the networks with their tokens and sandbox contracts', async () => {
    const tenant = await seedTenant(s.t.services);
    const { status, body } = await get(tenant.keys.READ_ONLY, '/api/v1/evm/networks');
    expect(status).toBe(200);
    expect(body.data).toHaveLength(8);
    const base = body.data.find((n: { id: string }) => n.id === 'base');
    expect(base).toMatchObject({ chainId: 8453, native: { symbol: 'ETH', decimals: 18 }, dataFee: true });
    const usdc = base.tokens.find((t: { symbol: string }) => t.symbol === 'USDC');
    expect(usdc).toMatchObject({ decimals: 6, address: chain().tokenAddress('USDC') });
    const bnb = body.data.find((n: { id: string }) => n.id === 'bnb-smart-chain');
    expect(bnb.tokens.find((t: { symbol: string }) => t.symbol === 'USDT').decimals).toBe(18);
  });

  it('shows the faucet’s coins in the native balance, the token balance and the portfolio', async () => {
    const { tenant, address } = await funded(2n * ETH, 1_000n * USDC);
    const native = await get(tenant.keys.READ_ONLY, '/api/v1/evm/base/balance');
    expect(native.status).toBe(200);
    expect(native.body.data).toMatchObject({
      address,
      symbol: 'ETH',
      token: null,
      amount: '2',
      amountRaw: `${2n * ETH}`,
    });
    const usdc = await get(tenant.keys.READ_ONLY, '/api/v1/evm/base/tokens/usdc/balance');
    expect(usdc.body.data).toMatchObject({ symbol: 'USDC', decimals: 6, amount: '1000', amountRaw: '1000000000' });
    const portfolio = await graphql(
      s.t.app,
      tenant.keys.READ_ONLY,
      'query($n: String!) { evmPortfolio(network: $n) { address chainId native { amount } tokens { symbol amount amountRaw } } }',
      { n: 'base' },
    );
    const view = portfolio.body.data!.evmPortfolio;
    expect(view).toMatchObject({ address, chainId: 8453, native: { amount: '2' } });
    expect(view.tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['USDT', 'USDC', 'CNGN', 'WETH']);
    expect(view.tokens.find((t: { symbol: string }) => t.symbol === 'USDC')).toMatchObject({
      amount: '1000',
      amountRaw: '1000000000',
    });
    expect(view.tokens.find((t: { symbol: string }) => t.symbol === 'USDT')).toMatchObject({ amount: '0' });
  });

  it('sends ETH and USDC: the chain’s balances move, the contract emits Transfer, the fee is captured as paid', async () => {
    const sender = await funded(ETH, 100n * USDC);
    const recipient = await funded(0n, 0n);
    const native = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-native', {
      to: recipient.address,
      amount: '0.25',
    });
    expect(native.status).toBe(201);
    expect(native.body.data).toMatchObject({
      status: 'confirmed',
      kind: 'native',
      asset: 'ETH',
      amount: '0.25',
      nonce: '0',
    });
    expect(await chain().nativeBalance(recipient.address)).toBe(ETH / 4n);
    const receipt = (await chain().receipt(native.body.data.hash))!;
    const paid = receipt.gasUsed * receipt.effectiveGasPrice + receipt.dataFee;
    expect(await chain().nativeBalance(sender.address)).toBe(ETH - ETH / 4n - paid);

    const token = await graphql(
      s.t.app,
      sender.tenant.keys.TRANSACTIONS,
      `mutation($i: EvmSendInput!) { sendEvmToken(network: "base", token: "USDC", input: $i) { ${TRANSFER_FIELDS} } }`,
      { i: { to: recipient.address, amount: '12.5' } },
    );
    const sent = token.body.data!.sendEvmToken;
    expect(sent).toMatchObject({
      status: 'confirmed',
      kind: 'token',
      asset: 'USDC',
      amountRaw: '12500000',
      nonce: '1',
    });
    const usdc = chain().tokenAddress('USDC');
    expect(await chain().tokenBalance(recipient.address, usdc)).toBe(12_500_000n);
    expect(await chain().tokenBalance(sender.address, usdc)).toBe(87_500_000n);
    const tokenReceipt = (await chain().receipt(sent.hash))!;
    const log = tokenReceipt.logs.find((l) => l.topics[0] === TRANSFER_TOPIC)!;
    expect(log.address.toLowerCase()).toBe(usdc.toLowerCase());
    expect(log.topics[1]!.slice(-40)).toBe(sender.address.slice(2).toLowerCase());
    expect(log.topics[2]!.slice(-40)).toBe(recipient.address.slice(2).toLowerCase());
    expect(BigInt(log.data)).toBe(12_500_000n);

    // Each hold ended once: captured, nothing left held.
    const holds = await queryRows<{ status: string; n: number }>(
      s.t.services.db,
      sql`select status::text, count(*)::int as n from asset_holds
          where send_id in (${native.body.data.id}::uuid, ${sent.id}::uuid) group by status`,
    );
    expect(holds).toEqual([{ status: 'captured', n: 3 }]);
  });

  it('refuses a short token balance naming what is spendable, and a wallet without gas naming the gas needed', async () => {
    const sender = await funded(ETH, 5n * USDC);
    const recipient = await funded(0n, 0n);
    const short = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      token: 'USDC',
      to: recipient.address,
      amount: '6',
    });
    expect(short.status).toBe(400);
    expect(short.body.message).toContain('Insufficient USDC on base: 5 spendable, 6 asked.');

    const noGas = await funded(0n, 5n * USDC);
    const refused = await post(noGas.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      token: 'USDC',
      to: recipient.address,
      amount: '1',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^Insufficient ETH on base: 0 spendable, [\d.]+ needed for [\d.]+ ETH of gas/);
    const tooMuch = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-native', {
      to: recipient.address,
      amount: '1',
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.message).toMatch(/^Insufficient ETH on base: 1 spendable, 1\.[\d]+ needed: the amount and/);
    // Nothing was signed for the refusals: the wallet's first send still takes nonce 0.
    const ok = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      token: 'USDC',
      to: recipient.address,
      amount: '5',
    });
    expect(ok.body.data).toMatchObject({ status: 'confirmed', nonce: '0' });
  });

  it('answers a keyed send again without signing twice', async () => {
    const sender = await funded(ETH, 0n);
    const recipient = await funded(0n, 0n);
    const body = { to: recipient.address, amount: '0.01' };
    const first = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-native', body, 'evm-once-1');
    const again = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-native', body, 'evm-once-1');
    expect(first.status).toBe(201);
    expect(again.body.data).toEqual(first.body.data);
    expect(await chain().nativeBalance(recipient.address)).toBe(ETH / 100n);
    const other = await post(
      sender.tenant.keys.TRANSACTIONS,
      '/api/v1/evm/base/send-native',
      { ...body, amount: '0.02' },
      'evm-once-1',
    );
    expect(other.status).toBe(422);
    const rows = await queryRows<{ n: number }>(
      s.t.services.db,
      sql`select count(*)::int as n from chain_sends where family = 'evm' and from_address = ${sender.address}`,
    );
    expect(rows[0]!.n).toBe(1);
  });

  it('ends a send mined and reverted as failed: its fee captured, its amount released', async () => {
    const sender = await funded(ETH, 10n * USDC);
    // OpenZeppelin's ERC-20 reverts a transfer to the zero address.
    const reverted = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      token: 'USDC',
      to: '0x0000000000000000000000000000000000000000',
      amount: '1',
    });
    expect(reverted.status).toBe(201);
    expect(reverted.body.data).toMatchObject({ status: 'failed', nonce: '0' });
    expect(reverted.body.data.error).toMatch(/^Reverted on chain/);
    const receipt = (await chain().receipt(reverted.body.data.hash))!;
    expect(receipt.status).toBe('reverted');
    expect(await chain().transactionCount(sender.address)).toBe(1n);
    expect(await chain().tokenBalance(sender.address, chain().tokenAddress('USDC'))).toBe(10n * USDC);
    const balance = await get(sender.tenant.keys.READ_ONLY, '/api/v1/evm/base/balance');
    const paid = receipt.gasUsed * receipt.effectiveGasPrice + receipt.dataFee;
    expect(BigInt(balance.body.data.amountRaw)).toBe(ETH - paid);
    // The next send is free to spend all the tokens: the failed one holds nothing.
    const next = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      token: 'USDC',
      to: (await funded(0n, 0n)).address,
      amount: '10',
    });
    expect(next.body.data).toMatchObject({ status: 'confirmed', nonce: '1' });
  });

  it('tells an arrival from another sandbox wallet once, as transaction.completed', async () => {
    const sender = await funded(ETH, 50n * USDC);
    const recipient = await funded(0n, 0n);
    const sent = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      token: 'USDC',
      to: recipient.address,
      amount: '7',
    });
    expect(sent.body.data.status).toBe('confirmed');
    await s.t.services.evmIncoming.poll();
    await s.t.services.evmIncoming.poll();
    const told = await queryRows<{ data: Record<string, unknown> }>(
      s.t.services.db,
      sql`select data from events where user_id = ${recipient.tenant.user.id}::uuid and type = 'transaction.completed'
          and data->>'type' = 'CRYPTO_DEPOSIT' and data->>'hash' = ${sent.body.data.hash}`,
    );
    expect(told).toHaveLength(1);
    expect(told[0]!.data).toMatchObject({
      network: 'base',
      asset: 'USDC',
      amount: '7',
      from: sender.address,
      to: recipient.address,
    });
  });

  it('answers a receipt of a block this process mined from memory, equal to the stored one', async () => {
    const sender = await funded(ETH, 10n * USDC);
    const recipient = await funded(0n, 0n);
    const sent = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-token', {
      to: recipient.address,
      token: 'USDC',
      amount: '1.5',
    });
    expect(sent.body.data.status).toBe('confirmed');
    const stored = await evmChainRows.receipt(s.t.services.db, 'base', sent.body.data.hash.toLowerCase());
    expect(stored!.logs).toHaveLength(1);
    const read = vi.spyOn(evmChainRows, 'receipt');
    try {
      expect(await chain().receipt(sent.body.data.hash)).toEqual(stored);
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
  });

  it('hands the chain the sender’s public key it signed with, which is the key recovery finds in the mined bytes', async () => {
    const sender = await funded(ETH, 0n);
    const recipient = await funded(0n, 0n);
    // Watched on the chain itself, past every wrapper between the service and it.
    const given: Array<Uint8Array | undefined> = [];
    const original = SandboxEvmChain.prototype.sendRaw;
    SandboxEvmChain.prototype.sendRaw = function (this: SandboxEvmChain, wire, signer) {
      given.push(signer?.publicKey);
      return original.call(this, wire, signer);
    };
    try {
      const sent = await post(sender.tenant.keys.TRANSACTIONS, '/api/v1/evm/base/send-native', {
        to: recipient.address,
        amount: '0.001',
      });
      expect(sent.body.data.status).toBe('confirmed');
      const [mined] = await queryRows<{ raw: Buffer }>(
        s.t.services.db,
        sql`select raw from evm_sandbox_transactions where hash = ${sent.body.data.hash.toLowerCase()}`,
      );
      // Recovered from the signature, with nothing cached: the key the gateway said it signed with.
      const recovered = createTxFromRLP(new Uint8Array(mined!.raw), { common: commonOf('base') }).getSenderPublicKey();
      expect(given).toHaveLength(1);
      expect(Buffer.from(given[0]!).toString('hex')).toBe(Buffer.from(recovered).toString('hex'));
    } finally {
      SandboxEvmChain.prototype.sendRaw = original;
    }
  });
});

/**
 * A keyed send's key stays `running` for the configured lease (IDEMPOTENCY_LEASE_MS), as every
 * keyed operation's does: set here to a value no constant in the code has.
 */
describe('an EVM send’s lease', () => {
  const LEASE_MS = 97_000;
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ config: { IDEMPOTENCY_LEASE_MS: LEASE_MS } });
  });
  afterAll(() => s.t.close());

  it('is the configured idempotency lease, from the moment the send is stored', async () => {
    const tenant = await seedTenant(s.t.services);
    const chain = s.t.services.evmChains.sandboxFor('base');
    const address = (
      await s.t.app.inject({ url: '/api/v1/evm/address', headers: { 'x-api-key': tenant.keys.READ_ONLY } })
    ).json().data.address as string;
    await chain.faucet(address, { native: true }, ETH);
    const record = vi.spyOn(evmSendStore, 'record');
    const sent = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/evm/base/send-native',
      headers: { 'x-api-key': tenant.keys.TRANSACTIONS, 'idempotency-key': 'evm-lease-1' },
      payload: { to: address, amount: '0.01' },
    });
    expect(sent.statusCode, sent.body).toBe(201);
    expect(record).toHaveBeenCalledTimes(1);
    const [, written] = record.mock.calls[0]!;
    expect(written.key?.key).toBe('evm-lease-1');
    expect(written.leaseUntil.getTime() - written.row.createdAt.getTime()).toBe(LEASE_MS);
    record.mockRestore();
  });
});

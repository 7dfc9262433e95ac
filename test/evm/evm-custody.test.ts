import { eq } from 'drizzle-orm';
import { keccak256, parseTransaction, recoverAddress, recoverTransactionAddress, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmWallets } from '../../src/db/evm-wallet-schema.js';
import { evmAddresses } from '../../src/domain/evm/evm-keys.js';
import { evmSigning, prepareEvm } from '../../src/domain/evm/evm-signing.js';
import { graphql, sandboxPrincipal, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

describe('EVM custody and signing', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(() => s.t.close());

  it('reads a checksummed 0x address as the family’s, and nothing else', () => {
    const { address, secret } = evmAddresses.generate();
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(secret).toHaveLength(32);
    expect(evmAddresses.isValid(address)).toBe(true);
    expect(evmAddresses.isValid(address.toLowerCase())).toBe(true);
    // A mixed-case address with one letter's case flipped fails its EIP-55 checksum.
    const flipped = address.replace(/[a-f]/, (c) => c.toUpperCase());
    if (flipped !== address) expect(evmAddresses.isValid(flipped)).toBe(false);
    expect(evmAddresses.isValid('So11111111111111111111111111111111111111112')).toBe(false);
    expect(evmAddresses.isValid('0x1234')).toBe(false);
    // The registry tells an EVM address from a Solana one.
    expect(s.t.services.chainFamilies.familyOfAddress(address)?.name).toBe('evm');
    expect(s.t.services.chainFamilies.familyOfAddress('So11111111111111111111111111111111111111112')?.name).toBe(
      'solana',
    );
  });

  it('keeps one sealed key per user and environment, and signs EIP-1559 transactions the address recovers from', async () => {
    const principal = await sandboxPrincipal(s.t.services);
    const custody = s.t.services.evmWallets;
    const [a, b] = await Promise.all([custody.walletOf(principal), custody.walletOf(principal)]);
    expect(a.id).toBe(b.id);
    const [row] = await s.t.services.db.select().from(evmWallets).where(eq(evmWallets.id, a.id));
    // The secret is sealed, never stored as it is.
    expect(row!.encryptedSecret).not.toMatch(/^(0x)?[0-9a-f]{64}$/i);

    const digest = Buffer.from(keccak256('0x1234').slice(2), 'hex');
    const signature = await custody.sign(a, digest);
    expect(signature).toHaveLength(65);
    expect(await recoverAddress({ hash: toHex(digest), signature: toHex(signature) })).toBe(a.address);

    const family = s.t.services.chainFamilies.get('evm');
    const prepared = prepareEvm(
      {
        type: 'eip1559',
        chainId: 8453,
        nonce: 7,
        to: '0x000000000000000000000000000000000000dEaD',
        value: 10n ** 15n,
        gas: 21_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
      },
      a.address,
    );
    const signed = await family.signing.sign(prepared, (message) => custody.sign(a, message));
    const wire = toHex(signed.wire);
    expect(signed.hash).toBe(keccak256(wire));
    const parsed = parseTransaction(wire);
    expect(parsed).toMatchObject({ chainId: 8453, nonce: 7, value: 10n ** 15n, type: 'eip1559' });
    expect(await recoverTransactionAddress({ serializedTransaction: wire as `0x02${string}` })).toBe(a.address);
  });

  it('refuses to sign with a sealed key moved to another wallet', async () => {
    const custody = s.t.services.evmWallets;
    const one = await custody.walletOf(await sandboxPrincipal(s.t.services));
    const other = await custody.walletOf(await sandboxPrincipal(s.t.services));
    const digest = new Uint8Array(32).fill(1);
    await expect(custody.sign({ ...other, encryptedSecret: one.encryptedSecret }, digest)).rejects.toThrow(
      /failed to decrypt/,
    );
    await expect(
      evmSigning.sign({ unsigned: new Uint8Array([1, 2]), signer: one.address }, async () => digest),
    ).rejects.toThrow();
  });

  it('re-wraps its data keys under a new master key version, and still signs for the same address', async () => {
    const { EvmWallets } = await import('../../src/domain/evm/evm-wallets.js');
    const { MasterKeyring } = await import('../../src/domain/chain/keyring.js');
    const key = (n: number) => Buffer.alloc(32, n).toString('base64');
    const v1 = MasterKeyring.parse(`1:${key(1)}`, 'TEST')!;
    const both = MasterKeyring.parse(`1:${key(1)},2:${key(2)}`, 'TEST')!;
    const onlyV2 = MasterKeyring.parse(`2:${key(2)}`, 'TEST')!;
    let keyring = v1;
    const custody = new EvmWallets(s.t.services.db, () => keyring);
    const principal = await sandboxPrincipal(s.t.services);
    const wallet = await custody.walletOf(principal);
    expect(wallet.keyVersion).toBe(1);
    keyring = both;
    const result = await custody.rewrapDataKeys('sandbox');
    // Other tests' wallets in this database are sealed under the development keyring: listed, left as they are.
    expect(result.failed).not.toContain(wallet.id);
    expect(result.rewrapped).toBeGreaterThanOrEqual(1);
    keyring = onlyV2;
    const rewrapped = await custody.walletOf(principal);
    expect(rewrapped).toMatchObject({ id: wallet.id, address: wallet.address, keyVersion: 2 });
    const digest = new Uint8Array(32).fill(7);
    const signature = await custody.sign(rewrapped, digest);
    expect(await recoverAddress({ hash: toHex(digest), signature: toHex(signature) })).toBe(wallet.address);
  });

  it('serves the address over REST and GraphQL (Read Only), never the key', async () => {
    const tenant = await seedTenant(s.t.services);
    const rest = await s.t.app.inject({ url: '/api/v1/evm/address', headers: { 'x-api-key': tenant.keys.READ_ONLY } });
    expect(rest.statusCode).toBe(200);
    const address = rest.json().data.address;
    expect(evmAddresses.isValid(address)).toBe(true);
    const viaGraphql = await graphql(s.t.app, tenant.keys.READ_ONLY, '{ evmWallet { address } }');
    expect(viaGraphql.body.data!.evmWallet.address).toBe(address);
    expect(JSON.stringify(rest.json())).not.toMatch(/secret|wrapped/i);
  });

  it('answers production EVM requests 503 naming the JSON-RPC setting the network needs', async () => {
    const tenant = await seedTenant(s.t.services);
    const balance = await s.t.app.inject({
      url: '/api/v1/evm/base/balance',
      headers: { 'x-api-key': tenant.productionKey },
    });
    expect(balance.statusCode).toBe(503);
    expect(balance.json().message).toContain('EVM_RPC_URL_BASE');
    const networks = await s.t.app.inject({
      url: '/api/v1/evm/networks',
      headers: { 'x-api-key': tenant.productionKey },
    });
    expect(networks.statusCode).toBe(503);
    expect(networks.json().message).toContain('EVM_RPC_URL_ETHEREUM');
    const send = await s.t.app.inject({
      method: 'POST',
      url: '/api/v1/evm/arbitrum-one/send-native',
      headers: { 'x-api-key': tenant.productionKey },
      payload: { to: '0x000000000000000000000000000000000000dEaD', amount: '0.1' },
    });
    expect(send.statusCode).toBe(503);
    expect(send.json().message).toContain('EVM_RPC_URL_ARBITRUM_ONE');
  });

  it('refuses bad input with 400 naming the field, and sends without Transactions permission', async () => {
    const tenant = await seedTenant(s.t.services);
    const post = (url: string, payload: unknown, key = tenant.keys.TRANSACTIONS) =>
      s.t.app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload: payload as object });
    const badNetwork = await s.t.app.inject({
      url: '/api/v1/evm/solana/balance',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(badNetwork.statusCode).toBe(400);
    expect(JSON.stringify(badNetwork.json())).toContain('network');
    const badTo = await post('/api/v1/evm/base/send-native', { to: '0x1234', amount: '1' });
    expect(badTo.statusCode).toBe(400);
    expect(badTo.json().details).toContainEqual(expect.objectContaining({ field: 'to' }));
    const badAmount = await post('/api/v1/evm/base/send-native', {
      to: '0x000000000000000000000000000000000000dEaD',
      amount: '-1',
    });
    expect(badAmount.statusCode).toBe(400);
    expect(badAmount.json().details).toContainEqual(expect.objectContaining({ field: 'amount' }));
    const badToken = await s.t.app.inject({
      url: '/api/v1/evm/arbitrum-one/tokens/CNGN/balance',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(badToken.statusCode).toBe(400);
    expect(badToken.json().message).toContain('token must be one of USDT, USDC, WETH on arbitrum-one');
    const readOnly = await post(
      '/api/v1/evm/base/send-native',
      { to: '0x000000000000000000000000000000000000dEaD', amount: '1' },
      tenant.keys.READ_ONLY,
    );
    expect(readOnly.statusCode).toBe(403);
  });
});

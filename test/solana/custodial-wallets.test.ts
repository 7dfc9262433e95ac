import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { solanaWallets } from '../../src/db/solana-schema.js';
import type { Environment } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { CustodialWallets } from '../../src/domain/solana/custodial-wallets.js';
import { MasterKeyring } from '../../src/domain/chain/keyring.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

const principalOf = (userId: string, environment: Environment = 'sandbox'): Principal => ({
  kind: 'api_key',
  credentialId: 'test',
  userId,
  environment,
  abilities: new Set(['READ']),
});
const key = () => randomBytes(32).toString('base64');

/** An ed25519 signature checked with the wallet's public key (SPKI: a fixed prefix, then the key). */
function verifies(address: string, message: Uint8Array, signature: Uint8Array): boolean {
  const spki = Buffer.concat([
    Buffer.from('302a300506032b6570032100', 'hex'),
    Buffer.from(new PublicKey(address).toBytes()),
  ]);
  return verify(null, message, createPublicKey({ key: spki, format: 'der', type: 'spki' }), signature);
}

describe('custodial Solana wallets', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp();
  });
  afterAll(() => s.t.close());

  it('serves one address per user and environment, created on first use, over REST and GraphQL', async () => {
    const tenant = await seedTenant(s.t.services);
    const first = await s.t.app.inject({
      url: '/api/v1/solana/address',
      headers: { 'x-api-key': tenant.keys.READ_ONLY },
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      statusCode: 200,
      message: 'Wallet address retrieved successfully',
      data: { address: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/) },
      errors: {},
    });
    const again = await s.t.app.inject({
      url: '/api/v1/solana/address',
      headers: { 'x-api-key': tenant.keys.FULL_ACCESS },
    });
    expect(again.json().data.address).toBe(first.json().data.address);
    const viaGraphql = await graphql(s.t.app, tenant.keys.READ_ONLY, '{ solanaWallet { address } }');
    expect(viaGraphql.body.data!.solanaWallet.address).toBe(first.json().data.address);
    const other = await seedTenant(s.t.services);
    const otherAddress = (
      await s.t.app.inject({ url: '/api/v1/solana/address', headers: { 'x-api-key': other.keys.READ_ONLY } })
    ).json().data.address;
    expect(otherAddress).not.toBe(first.json().data.address);
    // Production has no master key configured here: a clear 503, never a sandbox fallback.
    const production = await s.t.app.inject({
      url: '/api/v1/solana/address',
      headers: { 'x-api-key': tenant.productionKey },
    });
    expect(production.statusCode).toBe(503);
    expect(production.json().message).toContain('SOLANA_MASTER_KEYS_PRODUCTION');
    expect((await s.t.app.inject({ url: '/api/v1/solana/address' })).statusCode).toBe(401);
  });

  it('signs with the stored key, and refuses a tampered or swapped ciphertext', async () => {
    const keyring = MasterKeyring.parse(`1:${key()}`, 'TEST')!;
    const wallets = new CustodialWallets(s.t.services.db, () => keyring);
    const alice = await wallets.walletOf(principalOf((await seedTenant(s.t.services)).user.id));
    const bob = await wallets.walletOf(principalOf((await seedTenant(s.t.services)).user.id));
    const message = new TextEncoder().encode('transfer 1 USDC');
    expect(verifies(alice.address, message, await wallets.sign(alice, message))).toBe(true);
    expect(verifies(bob.address, message, await wallets.sign(alice, message))).toBe(false);
    // No secret material in the clear: the row holds only sealed blobs.
    expect(JSON.stringify(alice)).not.toMatch(/"secretKey"/);
    const flipped = Buffer.from(alice.encryptedSecret, 'base64');
    flipped[20] = flipped[20]! ^ 1;
    await expect(wallets.sign({ ...alice, encryptedSecret: flipped.toString('base64') }, message)).rejects.toThrow(
      /decrypt/,
    );
    await expect(wallets.sign({ ...alice, encryptedSecret: bob.encryptedSecret }, message)).rejects.toThrow(/decrypt/);
    await expect(wallets.sign({ ...alice, wrappedDataKey: bob.wrappedDataKey }, message)).rejects.toThrow(/decrypt/);
    await expect(wallets.sign({ ...alice, userId: bob.userId }, message)).rejects.toThrow(/decrypt/);
    const wrongMaster = new CustodialWallets(s.t.services.db, () => MasterKeyring.parse(`1:${key()}`, 'TEST'));
    await expect(wrongMaster.sign(alice, message)).rejects.toThrow(/decrypt/);
  });

  it('rotates the master key: re-wrap with the new version, drop the old one, and still sign', async () => {
    const [v1, v2] = [key(), key()];
    let keyring = MasterKeyring.parse(`1:${v1}`, 'TEST')!;
    const wallets = new CustodialWallets(s.t.services.db, () => keyring);
    const tenant = await seedTenant(s.t.services);
    const wallet = await wallets.walletOf(principalOf(tenant.user.id));
    expect(wallet.keyVersion).toBe(1);
    keyring = MasterKeyring.parse(`1:${v1},2:${v2}`, 'TEST')!;
    // Other tests' wallets here were sealed under other keys: they are listed, not lost.
    const first = await wallets.rewrapDataKeys('sandbox');
    expect(first.rewrapped).toBeGreaterThanOrEqual(1);
    expect(first.failed).not.toContain(wallet.id);
    expect((await wallets.rewrapDataKeys('sandbox')).rewrapped).toBe(0);
    const [rewrapped] = await s.t.services.db.select().from(solanaWallets).where(eq(solanaWallets.id, wallet.id));
    expect(rewrapped).toMatchObject({
      keyVersion: 2,
      address: wallet.address,
      encryptedSecret: wallet.encryptedSecret,
    });
    keyring = MasterKeyring.parse(`2:${v2}`, 'TEST')!;
    const message = new TextEncoder().encode('after rotation');
    expect(verifies(wallet.address, message, await wallets.sign(rewrapped!, message))).toBe(true);
    // A wallet still on a dropped version says which version to add back.
    await expect(wallets.sign(wallet, message)).rejects.toThrow(/version 1 is not configured/);
  });

  it('refuses malformed master key settings, naming the variable', () => {
    expect(() => MasterKeyring.parse('1:short', 'SOLANA_MASTER_KEYS_SANDBOX')).toThrow(/SOLANA_MASTER_KEYS_SANDBOX/);
    expect(() => MasterKeyring.parse(`x:${key()}`, 'SOLANA_MASTER_KEYS_SANDBOX')).toThrow(/version:base64/);
    expect(MasterKeyring.parse(`3:${key()},7:${key()}`, 'X')!.currentVersion).toBe(7);
  });
});

import { randomBytes } from 'node:crypto';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { address } from '@solana/kit';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainSends } from '../../src/db/chain-schema.js';
import { solanaWatchCursors } from '../../src/db/solana-schema.js';
import { events } from '../../src/db/schema.js';
import { assetLedger } from '../../src/domain/assets/asset-ledger.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { parseTokenAccount } from '../../src/domain/solana/litesvm-chain.js';
import { SOL_MINT } from '../../src/domain/solana/native-token.js';
import { putAccount } from '../../src/domain/solana/sandbox-accounts.js';
import { SolanaConfirmHandler } from '../../src/domain/solana/solana-jobs.js';
import { incomingTransferRecorder } from '../../src/domain/solana/incoming-transfers.js';
import { IncomingWatch } from '../../src/domain/solana/incoming-watch.js';
import { RpcChain } from '../../src/domain/solana/rpc-chain.js';
import { FakeSolanaRpc } from '../fakes/solana-rpc.js';
import { seedTenant, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

describe('production transfers over Solana RPC (a local node that drops and expires transactions)', () => {
  const fake = new FakeSolanaRpc();
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let tenant: Tenant;
  let runner: JobRunner;
  let wallet: PublicKey;
  let token: ReturnType<FakeSolanaRpc['createToken']>;

  beforeAll(async () => {
    await fake.start();
    ({ t, tenant } = await startTestApp({
      clock,
      isolated: true,
      config: {
        SOLANA_RPC_URL_MAINNET_BETA: fake.url,
        SOLANA_MASTER_KEYS_PRODUCTION: `1:${randomBytes(32).toString('base64')}`,
        SOLANA_CONFIRM_WAIT_MS: 300,
      },
    }));
    runner = new JobRunner(t.services.db, clock, [new SolanaConfirmHandler(t.services.solanaTransfers, clock)]);
    wallet = new PublicKey((await call('GET', '/api/v1/solana/address')).json().data.address);
    fake.airdrop(wallet, BigInt(LAMPORTS_PER_SOL));
    token = fake.createToken('TST', 6);
    token.fund(wallet, 100_000_000n);
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url,
      payload: payload as never,
      headers: { 'x-api-key': tenant.productionKey, ...headers },
    });
  const tokenAmount = (owner: PublicKey) => {
    const account = fake.svm.getAccount(
      address(getAssociatedTokenAddressSync(new PublicKey(token.address), owner, true).toBase58()),
    );
    return account.exists ? parseTokenAccount(account.data).amount : undefined;
  };
  const rowOf = async (signature: string) =>
    (await t.services.db.select().from(chainSends).where(eq(chainSends.txHash, signature)))[0]!;
  /** The confirmation job's next turn. */
  const tick = async () => {
    clock.advance(2_100);
    await runner.runDueJobs();
  };

  it('re-broadcasts a dropped transaction until it is confirmed, moving the amount once', async () => {
    const stranger = Keypair.generate().publicKey;
    fake.dropSends = 1;
    const answer = await call('POST', '/api/v1/solana/transfer-token', {
      to: stranger.toBase58(),
      tokenMintAddress: token.address,
      amount: '10',
      network: 'mainnet-beta',
    });
    expect(answer.statusCode).toBe(201);
    const { signature, status } = answer.json().data;
    expect(status).toBe('pending');
    expect(tokenAmount(stranger)).toBeUndefined();

    await tick(); // unknown to the chain, blockhash alive: sent again
    expect(fake.sent.filter((s) => s === signature)).toHaveLength(2);
    await tick(); // now confirmed
    expect((await rowOf(signature)).status).toBe('confirmed');
    expect(tokenAmount(stranger)).toBe(10_000_000n);
    expect(tokenAmount(wallet)).toBe(90_000_000n);
    const completed = await t.services.db
      .select()
      .from(events)
      .where(and(eq(events.userId, tenant.user.id), eq(events.type, 'transaction.completed')));
    expect(completed.map((e) => (e.data as { signature: string }).signature)).toContain(signature);
  });

  it('fails a transaction whose blockhash expired unconfirmed, and releases its hold', async () => {
    const to = Keypair.generate().publicKey.toBase58();
    fake.dropSends = 100;
    const held = (await call('POST', '/api/v1/solana/transfer-sol', { to, amount: '0.5' })).json().data;
    expect(held.status).toBe('pending');
    // While it is pending its 0.5 SOL is held: 0.6 more is more than the rest.
    const refused = await call('POST', '/api/v1/solana/transfer-sol', { to, amount: '0.6' });
    expect(refused.json()).toMatchObject({ statusCode: 400, errorCode: 'INSUFFICIENT_FUNDS' });

    await tick();
    expect((await rowOf(held.signature)).status).toBe('pending');
    fake.advanceBlocks(200);
    await tick();
    const failed = await rowOf(held.signature);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/Expired/);
    const told = await t.services.db
      .select()
      .from(events)
      .where(and(eq(events.userId, tenant.user.id), eq(events.type, 'transaction.failed')));
    expect(told.map((e) => (e.data as { signature: string }).signature)).toEqual([held.signature]);
    expect(fake.svm.getBalance(address(to))).toBeNull();

    fake.dropSends = 0;
    const released = await call('POST', '/api/v1/solana/transfer-sol', { to, amount: '0.6' });
    expect(released.json().data.status).toBe('confirmed');
    expect(fake.svm.getBalance(address(to))).toBe(600_000_000n);
  });

  it('answers a repeated request with the stored signature and never signs twice', async () => {
    const to = Keypair.generate().publicKey.toBase58();
    fake.dropSends = 1;
    const body = { to, tokenMintAddress: token.address, amount: '1', network: 'mainnet-beta' };
    const first = (
      await call('POST', '/api/v1/solana/transfer-token', body, { 'idempotency-key': 'rpc-repeat' })
    ).json().data;
    const second = (
      await call('POST', '/api/v1/solana/transfer-token', body, { 'idempotency-key': 'rpc-repeat' })
    ).json().data;
    expect(second.signature).toBe(first.signature);
    await tick();
    await tick();
    const rows = await t.services.db.select().from(chainSends).where(eq(chainSends.toAddress, to));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('confirmed');
    // Every send of this transfer carried the one signature made once.
    const sends = fake.sent.filter((s) => s === first.signature);
    expect(sends.length).toBeGreaterThanOrEqual(2);
    expect(tokenAmount(new PublicKey(to))).toBe(1_000_000n);
  });

  it('detects SOL and tokens arriving at the production wallet from others, once each, and not its own sends', async () => {
    const payer = Keypair.generate();
    fake.airdrop(payer.publicKey, BigInt(LAMPORTS_PER_SOL));
    token.fund(payer.publicKey, 50_000_000n);
    const mint = new PublicKey(token.address);
    const tx = new Transaction({
      feePayer: payer.publicKey,
      blockhash: fake.svm.latestBlockhash(),
      lastValidBlockHeight: 0,
    }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: wallet, lamports: 300_000_000n }),
      createTransferCheckedInstruction(
        getAssociatedTokenAddressSync(mint, payer.publicKey),
        mint,
        getAssociatedTokenAddressSync(mint, wallet, true),
        payer.publicKey,
        5_000_000n,
        6,
      ),
    );
    tx.sign(payer);
    const signature = await new Connection(fake.url, 'confirmed').sendRawTransaction(tx.serialize());
    const arrivals = async () =>
      (
        await t.services.db
          .select()
          .from(events)
          .where(and(eq(events.userId, tenant.user.id), eq(events.type, 'transaction.completed')))
      )
        .map((e) => e.data as { type: string; signature: string; mint: string; amount: string })
        .filter((d) => d.type === 'CRYPTO_DEPOSIT');

    await t.services.solanaIncoming.poll(); // the wallet, which also lists its token accounts
    await t.services.solanaIncoming.poll(); // its token account
    const seen = await arrivals();
    const told = seen.filter((a) => a.signature === signature).map((a) => [a.mint, a.amount]);
    expect(told).toHaveLength(2);
    expect(told).toEqual(
      expect.arrayContaining([
        ['So11111111111111111111111111111111111111112', '0.3'],
        [token.address, '5'],
      ]),
    );
    // Its own sends are not arrivals, and nothing is told twice.
    expect(seen.filter((a) => a.signature !== signature)).toEqual([]);
    clock.advance(31_000);
    await t.services.solanaIncoming.poll();
    clock.advance(31_000);
    await t.services.solanaIncoming.poll();
    expect(await arrivals()).toHaveLength(2);
  });

  it('two watchers polling at once tell each arrival once (addresses are leased)', async () => {
    const payer = Keypair.generate();
    fake.airdrop(payer.publicKey, BigInt(LAMPORTS_PER_SOL));
    const tx = new Transaction({
      feePayer: payer.publicKey,
      blockhash: fake.svm.latestBlockhash(),
      lastValidBlockHeight: 0,
    }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: wallet, lamports: 70_000_000n }));
    tx.sign(payer);
    const signature = await new Connection(fake.url, 'confirmed').sendRawTransaction(tx.serialize());
    const other = new IncomingWatch(
      t.services.db,
      clock,
      { 'mainnet-beta': new RpcChain('mainnet-beta', fake.url) },
      incomingTransferRecorder('production', clock),
    );
    for (let round = 0; round < 3; round++) {
      clock.advance(31_000);
      await Promise.all([t.services.solanaIncoming.poll(), other.poll()]);
    }
    const told = (
      await t.services.db
        .select()
        .from(events)
        .where(and(eq(events.userId, tenant.user.id), eq(events.type, 'transaction.completed')))
    ).filter((e) => (e.data as { signature: string }).signature === signature);
    expect(told).toHaveLength(1);
    expect(told[0]!.data).toMatchObject({ type: 'CRYPTO_DEPOSIT', amount: '0.07' });
  });

  it('follows the chain down as well as up: SOL that left the wallet without a send of ours is posted with the next send', async () => {
    const owner = await seedTenant(t.services);
    const address = (
      await t.app.inject({ url: '/api/v1/solana/address', headers: { 'x-api-key': owner.productionKey } })
    ).json().data.address as string;
    const send = (amount: string) =>
      call(
        'POST',
        '/api/v1/solana/transfer-sol',
        { to: Keypair.generate().publicKey.toBase58(), amount },
        {
          'x-api-key': owner.productionKey,
        },
      );
    /** The ledger's wallet plus holds, against what the chain holds. */
    const books = async () => {
      const place = { environment: 'production' as const, family: 'solana', network: 'mainnet-beta' };
      const figure = (await assetLedger.balances(t.services.db, place, owner.user.id, [SOL_MINT])).get(SOL_MINT)!;
      return { ledger: figure.available + figure.held, chain: fake.svm.getBalance(address as never) ?? 0n };
    };
    fake.dropSends = 0;
    fake.airdrop(new PublicKey(address), BigInt(LAMPORTS_PER_SOL));
    expect((await send('0.1')).json().data.status).toBe('confirmed');
    expect(await books()).toEqual({ ledger: (await books()).chain, chain: (await books()).chain });
    // 0.3 SOL leaves by other means (the key used elsewhere): no send of ours, no hold.
    const before = fake.svm.getBalance(address as never)!;
    putAccount(
      fake.svm,
      address,
      {
        address,
        lamports: before - 300_000_000n,
        owner: '11111111111111111111111111111111',
        data: new Uint8Array(),
        executable: false,
      },
      '11111111111111111111111111111111',
    );
    expect((await send('0.05')).json().data.status).toBe('confirmed');
    const after = await books();
    expect(after.ledger).toBe(after.chain);
    // Spendable is what the chain has, not 0.3 SOL more: a send only the old figure covered is refused up front.
    const tooMuch = await send('0.7');
    expect(tooMuch.json()).toMatchObject({ statusCode: 400, errorCode: 'INSUFFICIENT_FUNDS' });
  });

  it('watches a new production wallet from its creation, before any polling round', async () => {
    const newcomer = await seedTenant(t.services);
    const address = (
      await t.app.inject({ url: '/api/v1/solana/address', headers: { 'x-api-key': newcomer.productionKey } })
    ).json().data.address;
    const cursors = await t.services.db
      .select()
      .from(solanaWatchCursors)
      .where(eq(solanaWatchCursors.address, address));
    expect(cursors.map((c) => c.network)).toEqual(['mainnet-beta']);
    // A sandbox wallet is not watched: sandbox chains tell arrivals as they execute.
    const sandboxAddress = (
      await t.app.inject({ url: '/api/v1/solana/address', headers: { 'x-api-key': newcomer.keys.READ_ONLY } })
    ).json().data.address;
    expect(
      await t.services.db.select().from(solanaWatchCursors).where(eq(solanaWatchCursors.address, sandboxAddress)),
    ).toEqual([]);
  });
});

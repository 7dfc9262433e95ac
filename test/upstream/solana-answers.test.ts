import { randomBytes } from 'node:crypto';
import { address } from '@solana/kit';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { JupiterProvider } from '../../src/domain/solana/jupiter-provider.js';
import { SOL_MINT } from '../../src/domain/solana/sandbox-world.js';
import { SolanaConfirmHandler } from '../../src/domain/solana/solana-jobs.js';
import { FakeJupiter } from '../fakes/jupiter.js';
import { spoil } from '../fakes/malformed.js';
import { FakeSolanaRpc } from '../fakes/solana-rpc.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectShapeFault, expectShapeRejection } from './upstream-fault.js';

const NODE = 'The Solana RPC node';
const JUPITER = 'The swap router (Jupiter)';

/**
 * The Solana JSON-RPC node and Jupiter answering 200 in shapes other than their documented ones:
 * a read is a 503 naming the path; a send whose answer cannot be read stays pending, its amount
 * held, until the chain is asked again.
 */
describe('Solana RPC and Jupiter answers that are not their documented shape', () => {
  const rpc = new FakeSolanaRpc();
  const clock = new ManualClock(Date.now());
  let jupiter: FakeJupiter;
  let token: ReturnType<FakeSolanaRpc['createToken']>;
  let t: TestApp;
  let tenant: Tenant;
  let wallet: PublicKey;

  beforeAll(async () => {
    await rpc.start();
    token = rpc.createToken('SHAPE', 6);
    jupiter = await new FakeJupiter(rpc, token).start();
    ({ t, tenant } = await startTestApp({
      clock,
      isolated: true,
      config: {
        SOLANA_RPC_URL_MAINNET_BETA: rpc.url,
        SOLANA_MASTER_KEYS_PRODUCTION: `1:${randomBytes(32).toString('base64')}`,
        SOLANA_CONFIRM_WAIT_MS: 300,
        JUPITER_BASE_URL: `${jupiter.url}/swap/v1`,
        JUPITER_PRICE_URL: `${jupiter.url}/price/v3`,
      },
    }));
    wallet = new PublicKey((await call('GET', '/api/v1/solana/address')).json().data.address);
    rpc.airdrop(wallet, 5n * BigInt(LAMPORTS_PER_SOL));
    token.fund(wallet, 50_000_000n);
  });
  afterEach(() => {
    rpc.malformed.clear();
    jupiter.malformed.clear();
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([jupiter.stop(), rpc.stop()]);
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    t.app.inject({ method, url, payload: payload as never, headers: { 'x-api-key': tenant.productionKey } });
  const lamports = () => rpc.svm.getBalance(address(wallet.toBase58())) ?? 0n;

  it('answers 503 naming the path when a balance or a token account is not its documented shape', async () => {
    const balance = () => call('GET', '/api/v1/solana/balance?network=mainnet-beta');
    rpc.malformed.add({ method: 'getBalance', body: spoil.numberAsString(['result', 'value']), times: 1 });
    expectShapeFault(await balance(), NODE, '/result/value', ['5000000000']);
    rpc.malformed.add({ method: 'getBalance', body: spoil.nullBody(), times: 1 });
    expectShapeFault(await balance(), NODE, '/');
    rpc.malformed.add({ method: 'getBalance', body: spoil.set(['error'], 'busy'), times: 1 });
    expectShapeFault(await balance(), NODE, '/error');
    expect((await balance()).statusCode).toBe(200);

    const tokenAccounts = (path: Array<string | number>) => [
      'result',
      'value',
      0,
      'account',
      'data',
      'parsed',
      ...path,
    ];
    const portfolio = () => call('GET', '/api/v1/solana/portfolio?network=mainnet-beta');
    rpc.malformed.add({
      method: 'getTokenAccountsByOwner',
      body: spoil.set(tokenAccounts(['info', 'tokenAmount', 'amount']), 50_000_000),
      times: 1,
    });
    expectShapeFault(await portfolio(), NODE, '/result/value/0/account/data/parsed/info/tokenAmount/amount');
    rpc.malformed.add({ method: 'getTokenAccountsByOwner', body: spoil.drop(tokenAccounts(['info'])), times: 1 });
    expectShapeFault(await portfolio(), NODE, '/result/value/0/account/data/parsed/info');
    rpc.malformed.add({ method: 'getTokenAccountsByOwner', body: spoil.notArray(['result', 'value']), times: 1 });
    expectShapeFault(await portfolio(), NODE, '/result/value');
    expect((await portfolio()).statusCode).toBe(200);
  });

  it('holds nothing and sends nothing when the blockhash answer is unreadable', async () => {
    const before = lamports();
    const sends = rpc.sent.length;
    rpc.malformed.add({ method: 'getLatestBlockhash', body: spoil.drop(['result', 'value', 'blockhash']) });
    const sent = await call('POST', '/api/v1/solana/transfer-sol', {
      to: Keypair.generate().publicKey.toBase58(),
      amount: '0.1',
    });
    expectShapeFault(sent, NODE, '/result/value/blockhash');
    expect(rpc.sent.length).toBe(sends);
    expect(lamports()).toBe(before);
  });

  it('keeps a send pending, its amount held, when the node took it but its answer is unreadable', async () => {
    const runner = new JobRunner(t.services.db, clock, [new SolanaConfirmHandler(t.services.solanaTransfers, clock)]);
    const spoilers = [
      spoil.set(['result'], 42),
      spoil.asArray(['result']),
      () => ({ jsonrpc: '2.0', id: 1, error: 'busy' }),
      spoil.nullBody(),
    ];
    for (const [i, body] of spoilers.entries()) {
      const to = Keypair.generate().publicKey.toBase58();
      rpc.malformed.add({ method: 'sendTransaction', body, times: 1 });
      // The confirmation poll is kept from seeing it land, so the answer is the send's own outcome.
      rpc.malformed.add({ method: 'getSignatureStatuses', body: spoil.nullBody() });
      const sent = await call('POST', '/api/v1/solana/transfer-sol', { to, amount: '0.1' });
      expect(sent.statusCode, sent.body).toBe(201);
      expect(sent.json().data.status, `spoiler ${i}`).toBe('pending');
      // The chain took it: only the node's answer was lost.
      expect(rpc.svm.getBalance(address(to))).toBe(100_000_000n);
      rpc.malformed.clear();
      // The confirmation job asks the chain and settles it.
      clock.advance(2_100);
      await runner.runDueJobs();
      const settled = await call('GET', `/api/v1/solana/transactions/${sent.json().data.signature}`);
      expect(settled.json().data.status).toBe('confirmed');
    }
  });

  it('answers 503 naming the path for a Jupiter quote or swap not in its documented shape, and signs nothing', async () => {
    const quote = () => call('GET', `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${token.address}&amount=1`);
    const quotes: Array<[(body: any) => unknown, string]> = [
      [spoil.set(['outAmount'], 17057460), '/outAmount'],
      [spoil.drop(['inAmount']), '/inAmount'],
      [spoil.notArray(['routePlan']), '/routePlan'],
      [spoil.drop(['routePlan', 0, 'swapInfo']), '/routePlan/0/swapInfo'],
      [spoil.set(['otherAmountThreshold'], '12.5'), '/otherAmountThreshold'],
      [spoil.nullBody(), '/'],
      [spoil.asArray([]), '/'],
    ];
    for (const [body, path] of quotes) {
      jupiter.malformed.add({ path: /^\/swap\/v1\/quote/, body, times: 1 });
      expectShapeFault(await quote(), JUPITER, path);
    }
    expect((await quote()).statusCode).toBe(200);

    const before = lamports();
    const sends = rpc.sent.length;
    const swaps: Array<[(body: any) => unknown, string]> = [
      [spoil.drop(['swapTransaction']), '/swapTransaction'],
      [spoil.set(['swapTransaction'], 'AAAA'), '/swapTransaction'],
      [spoil.set(['lastValidBlockHeight'], 'soon'), '/lastValidBlockHeight'],
      [spoil.nullBody(), '/'],
    ];
    for (const [body, path] of swaps) {
      jupiter.malformed.add({ method: 'POST', path: /^\/swap\/v1\/swap/, body, times: 1 });
      const swapped = await call('POST', '/api/v1/solana-exchange/swap-sol-to-token', {
        outputMint: token.address,
        amount: '0.1',
      });
      expectShapeFault(swapped, JUPITER, path);
    }
    expect(rpc.sent.length).toBe(sends);
    expect(lamports()).toBe(before);
  });

  it('rejects Jupiter prices not in their documented shape (a quote reads on without them)', async () => {
    const provider = new JupiterProvider({ baseUrl: `${jupiter.url}/swap/v1`, priceUrl: `${jupiter.url}/price/v3` });
    jupiter.malformed.add({ path: /^\/price\/v3/, body: spoil.set([SOL_MINT, 'usdPrice'], '150'), times: 1 });
    await expectShapeRejection(provider.usdPrices('mainnet-beta', [SOL_MINT]), `/${SOL_MINT}/usdPrice`);
    jupiter.malformed.add({ path: /^\/price\/v3/, body: () => [150], times: 1 });
    await expectShapeRejection(provider.usdPrices('mainnet-beta', [SOL_MINT]), '/');
    jupiter.malformed.add({ path: /^\/price\/v3/, body: spoil.nullBody() });
    const quoted = await call('GET', `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${token.address}&amount=1`);
    expect(quoted.statusCode, quoted.body).toBe(200);
  });
});

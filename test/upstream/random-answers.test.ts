import { Keypair, LAMPORTS_PER_SOL, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlutterwaveBillsProvider } from '../../src/domain/bills/flutterwave-bills-provider.js';
import { toDomainError } from '../../src/domain/error-mapping.js';
import { PaycrestProvider } from '../../src/domain/offramp/paycrest-provider.js';
import { TransactionRejected } from '../../src/domain/solana/chain.js';
import { JupiterProvider } from '../../src/domain/solana/jupiter-provider.js';
import { RpcChain } from '../../src/domain/solana/rpc-chain.js';
import { SOL_MINT } from '../../src/domain/solana/sandbox-world.js';
import { FakeFlutterwave } from '../fakes/flutterwave.js';
import { FakeJupiter } from '../fakes/jupiter.js';
import { type MalformedAnswers, type RandomSpoiling, spoilRandomly } from '../fakes/malformed.js';
import { FakePaycrest } from '../fakes/paycrest.js';
import { FakeSolanaRpc } from '../fakes/solana-rpc.js';
import { flutterwaveAgainst } from '../helpers/reconciliation.js';

const wide = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };
const customer = { email: 'ada@example.com', name: 'Ada Obi', phoneNumber: '+2348031234567' };

/** One field of the documented answer replaced by any JSON or dropped, or the whole body any JSON. */
const spoiling: fc.Arbitrary<RandomSpoiling> = fc.record({
  kind: fc.constantFrom('replace' as const, 'drop' as const, 'whole' as const),
  pick: fc.nat(),
  value: fc.jsonValue({ maxDepth: 3 }),
});

/**
 * Whatever a provider answers with a 200, every adapter call ends in an answer or in an error the
 * gateway answers as it documents (a DomainError: 4xx, or 503 for a provider fault), never in an
 * error a partner would see as a 500. The answers are the fakes' documented ones, spoiled at random.
 */
describe('random provider answers never become a 500', () => {
  const flw = new FakeFlutterwave();
  const paycrest = new FakePaycrest();
  const rpc = new FakeSolanaRpc();
  let jupiter: FakeJupiter;
  /** The fake Jupiter's token, on the fake node's chain. */
  let token: string;

  beforeAll(async () => {
    await Promise.all([flw.start(), paycrest.start(), rpc.start()]);
    const created = rpc.createToken('RAND', 6);
    token = created.address;
    jupiter = await new FakeJupiter(rpc, created).start();
  });
  afterAll(async () => {
    await Promise.all([flw.stop(), paycrest.stop(), rpc.stop(), jupiter.stop()]);
  });

  let sequence = 0;
  const next = (prefix: string) => `${prefix}-${++sequence}`;

  /** Runs each call under random spoilings of the fake's answers; `path` keeps the ones that must stay documented. */
  async function holds(
    answers: MalformedAnswers,
    calls: Record<string, () => Promise<unknown>>,
    options: { path?: RegExp; runs?: number } = {},
  ): Promise<void> {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(calls)), spoiling, async (name, drawn) => {
        answers.clear();
        answers.add({ ...(options.path ? { path: options.path } : {}), body: spoilRandomly(drawn) });
        try {
          await calls[name]!();
        } catch (error) {
          // A node refusing a transaction is the chain's own answer, which the transfer names.
          if (error instanceof TransactionRejected) return;
          expect(toDomainError(error).status, `${name}: ${(error as Error)?.stack}`).not.toBe(500);
        } finally {
          answers.clear();
        }
      }),
      { numRuns: options.runs ?? 150 },
    );
  }

  it('Flutterwave payments (v4, v3 Standard and the v3 lists)', async () => {
    const payments = flutterwaveAgainst(flw);
    const card = await payments.tokenizeCard({ number: '4111111111111111', expMonth: 9, expYear: 2032, cvv: '123' });
    const charge = await payments.chargeCard({ reference: next('c'), amount: 1000n, cardToken: card.token, customer });
    flw.addCharge(next('listed'), 'succeeded', 25);
    flw.addTransfer(next('listed'), 10);
    flw.addSettlement([{ txRef: 'x', amount: 25, fee: 1 }], new Date());
    const send = { bankCode: '044', accountNumber: '0690000040', accountName: 'A', narration: 'n' };
    await holds(
      flw.malformed,
      {
        banks: () => payments.banks(),
        resolve: () => payments.resolveAccount({ bankCode: '044', accountNumber: '0690000040' }),
        tokenize: () => payments.tokenizeCard({ number: '5531886652142950', expMonth: 9, expYear: 2032, cvv: '564' }),
        charge: () => payments.chargeCard({ reference: next('c'), amount: 1000n, cardToken: card.token, customer }),
        authorize: () =>
          payments.authorize({ providerRef: charge.providerRef, step: 'requires_otp' }, { type: 'otp', otp: '1' }),
        status: () => payments.chargeStatus(charge.providerRef),
        account: () => payments.bankTransferAccount({ reference: next('va'), amount: 1000n, customer }),
        ussd: () => payments.ussd({ reference: next('u'), amount: 1000n, bankCode: '058', customer }),
        link: () =>
          payments.paymentLink({
            reference: next('l'),
            amount: 1000n,
            customer,
            redirectUrl: 'https://x.test',
            title: 't',
          }),
        permanent: () => payments.permanentAccount({ reference: next('p'), customer }),
        transfer: () => payments.transfer({ reference: next('t'), amount: 1000n, ...send }),
        transferStatus: () => payments.transferStatus('t-1'),
        collections: () => payments.listCollections(wide),
        transfers: () => payments.listTransfers(wide),
        settlements: () => payments.listSettlements(wide),
      },
      { path: /^\/v[34]\// },
    );
  });

  it('Flutterwave bills (v3)', async () => {
    const bills = new FlutterwaveBillsProvider({ secretKey: flw.v3SecretKey, baseUrl: `${flw.url}/v3` });
    const paid = next('b');
    await bills.pay({
      billerCode: 'BIL099',
      itemCode: 'AT099',
      customer: '08031234567',
      amount: 10_000n,
      reference: paid,
    });
    await holds(flw.malformed, {
      categories: () => bills.categories(),
      billers: () => bills.billers('UTILITYBILLS'),
      items: () => bills.items('BIL112'),
      validate: () => bills.validate({ itemCode: 'UB157', billerCode: 'BIL112', customer: '45012345678' }),
      pay: () =>
        bills.pay({ billerCode: 'BIL112', itemCode: 'UB157', customer: '4501', amount: 10_000n, reference: next('b') }),
      status: () => bills.status(paid),
      list: () => bills.listPayments(wide),
    });
  });

  it('Paycrest', async () => {
    const provider = new PaycrestProvider({
      apiKey: paycrest.apiKey,
      apiSecret: paycrest.apiSecret,
      baseUrl: paycrest.url,
    });
    const order = (reference: string) => ({
      token: 'USDT' as const,
      network: 'ethereum' as const,
      amount: '50',
      rate: '1585.5',
      recipient: {
        institution: 'GTBINGLA',
        accountIdentifier: '0123456789',
        accountName: 'A',
        memo: 'm',
        currency: 'NGN' as const,
      },
      reference,
    });
    const placed = await provider.createOrder(order(next('o')));
    await holds(paycrest.malformed, {
      assets: () => provider.assets(),
      rate: () => provider.rate({ token: 'USDT', network: 'ethereum', amount: '50', fiat: 'NGN' }),
      institutions: () => provider.institutions('NGN'),
      verify: () => provider.verifyAccount({ institution: 'GTBINGLA', accountIdentifier: '0123456789' }),
      create: () => provider.createOrder(order(next('o'))),
      state: () => provider.orderState(placed.providerOrderId),
      list: () => provider.listOrders(wide),
    });
  });

  it('Jupiter (quote, swap, price)', async () => {
    const provider = new JupiterProvider({ baseUrl: `${jupiter.url}/swap/v1`, priceUrl: `${jupiter.url}/price/v3` });
    const request = {
      inputAsset: SOL_MINT,
      outputAsset: token,
      amountRaw: 1_000_000n,
      swapMode: 'ExactIn' as const,
      slippageBps: 50,
    };
    const quoted = await provider.quote('mainnet-beta', request);
    const user = Keypair.generate().publicKey.toBase58();
    await holds(jupiter.malformed, {
      quote: () => provider.quote('mainnet-beta', request),
      swap: () => provider.buildSwap(quoted.raw, user),
      prices: () => provider.usdPrices('mainnet-beta', [SOL_MINT, token]),
    });
  });

  it('the Solana JSON-RPC node, every method the production chain calls', async () => {
    const chain = new RpcChain('mainnet-beta', rpc.url);
    const payer = Keypair.generate();
    rpc.airdrop(payer.publicKey, 100n * BigInt(LAMPORTS_PER_SOL));
    const transfer = () => {
      const message = new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: rpc.svm.latestBlockhash(),
        instructions: [
          SystemProgram.transfer({
            fromPubkey: payer.publicKey,
            toPubkey: Keypair.generate().publicKey,
            lamports: 1_000_000,
          }),
        ],
      }).compileToV0Message();
      const transaction = new VersionedTransaction(message);
      transaction.sign([payer]);
      return transaction.serialize();
    };
    const signature = await chain.sendTransaction(transfer());
    const owner = payer.publicKey.toBase58();
    await holds(rpc.malformed, {
      blockhash: () => chain.latestBlockhash(),
      height: () => chain.blockHeight(),
      lamports: () => chain.lamports(owner),
      holdings: () => chain.tokenHoldings(jupiter.pool.publicKey.toBase58()),
      associated: () => chain.associatedTokenAmount(jupiter.pool.publicKey.toBase58(), token),
      decimals: () => chain.mintDecimals(token),
      exists: () => chain.accountExists(owner),
      rent: () => chain.rentExempt(165),
      send: () => chain.sendTransaction(transfer()),
      state: () => chain.signatureState(signature),
      arrivals: () => chain.arrivalsAt(owner, owner, undefined),
      signed: () => chain.signedBy(owner, wide),
      simulate: () => chain.simulate(transfer(), [owner]),
    });
  });
});

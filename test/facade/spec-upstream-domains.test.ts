import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type Misbehaviour, SOLANA_ADDRESS, SpecUpstream } from '../fakes/spec-upstream.js';

const RECORD =
  'id userId reference billerCode itemCode customer amount type status txRef billerName validityPeriod metadata token units createdAt';

interface GraphQLAnswer {
  data?: Record<string, Record<string, unknown> | null> | null;
  errors?: Array<{
    message: string;
    path?: string[];
    extensions: { code: string; retryAfter?: number; reference?: string };
  }>;
}

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';
const SOL = 'So11111111111111111111111111111111111111112';
const RECIPIENT = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';

/** Each bill operation a facade serves over the spec's paths, as a GraphQL document, and the path it asks. */
const OPERATIONS: Array<[string, string, string]> = [
  [
    'buyAirtime',
    'mutation { buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 100 }) { reference } }',
    '/api/v1/bills/buy-airtime',
  ],
  [
    'payElectricity',
    'mutation { payElectricity(input: { meterNumber: "45012345678", disco: "IKEDC", amount: 2000 }) { reference } }',
    '/api/v1/bills/pay/electricity',
  ],
  [
    'validateBillCustomer',
    'mutation { validateBillCustomer(input: { customer: "45012345678", billerCode: "IKEDC", itemCode: "UB1" }) { customerName } }',
    '/api/v1/bills/validate',
  ],
  ['billRecords', '{ billRecords(limit: 5) { total bills { reference } } }', '/api/v1/bills/records'],
  ['billRecord', '{ billRecord(reference: "BILL-X") { reference } }', '/api/v1/bills/records/reference/BILL-X'],
  ['solanaWallet', '{ solanaWallet { address } }', '/api/v1/solana/address'],
  ['offrampAssets', '{ offrampAssets { token network } }', '/api/v1/offramp/exchange/assets'],
  [
    'offrampQuote',
    '{ offrampQuote(token: USDT, network: base, amount: "100", fiat: NGN) { rate } }',
    '/api/v1/offramp/exchange/quote',
  ],
  [
    'swapQuote',
    `{ swapQuote(input: { inputMint: "${USDC}", outputMint: "${BONK}", amount: "1.5" }) { quoteId } }`,
    '/api/v1/solana-exchange/quote/token-to-token',
  ],
  [
    'depositWithPaymentMethod',
    'mutation { depositWithPaymentMethod(input: { amount: 500, paymentMethodId: "pm_1" }) { reference } }',
    '/api/v1/wallet/deposit/payment-method',
  ],
  [
    'transferSolanaToken',
    `mutation { transferSolanaToken(input: { to: "${RECIPIENT}", tokenMintAddress: "${USDC}", amount: "1.5" }) { signature } }`,
    '/api/v1/solana/transfer-token',
  ],
  [
    'swapTokens',
    `mutation { swapTokens(input: { inputMint: "${SOL}", outputMint: "${BONK}", amount: "0.5" }) { signature } }`,
    '/api/v1/solana-exchange/swap-token-to-sol',
  ],
  [
    'createBusinessCustomer',
    'mutation { createBusinessCustomer(businessId: "biz-1", input: { name: "Ada" }) { id } }',
    '/api/v1/customers/biz-1',
  ],
];

const DEPOSIT = `amount amountKobo reference currency customization { title } customer { email phoneNumber name }
  accountNumber bankName accountName expiry_datetime note status redirectUrl narration
  nextAction { type requires_pin requires_otp redirect_url payment_instruction }`;

describe('bills, the Solana address and the offramp through a facade in front of an upstream written from the spec', () => {
  let upstream: SpecUpstream;
  let facade: TestApp;
  let specRoutes: TestApp;

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    facade = await createTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url, UPSTREAM_TIMEOUT_MS: 1000 },
    });
    specRoutes = await createTestApp({
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url, UPSTREAM_ROUTES: 'spec' },
    });
  });

  afterEach(() => {
    upstream.misbehaviour = undefined;
    upstream.misbehavingPath = undefined;
    upstream.release();
  });

  afterAll(async () => {
    await facade.close();
    await specRoutes.close();
    await upstream.stop();
  });

  const graphql = async (
    key: string,
    query: string,
    headers: Record<string, string> = {},
    app = facade,
  ): Promise<GraphQLAnswer> => {
    const response = await app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
      payload: JSON.stringify({ query }),
    });
    return response.json() as GraphQLAnswer;
  };

  const knownUser = async () => upstream.addUser();

  const sentTo = (path: string) => upstream.requests.filter((r) => r.path === path);

  it("pays airtime with the spec's request, and reads its amount exactly", async () => {
    const { key, user } = await knownUser();
    // 1.15 is 114.99999999999999 kobo through a float multiplication.
    const answer = await graphql(
      key,
      `mutation { buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 1.15 }) { ${RECORD} } }`,
      { 'idempotency-key': 'air-key-1' },
    );
    expect(answer.errors).toBeUndefined();
    const sent = sentTo('/api/v1/bills/buy-airtime').at(-1)!;
    expect(sent.method).toBe('POST');
    expect(JSON.parse(sent.body)).toEqual({ phoneNumber: '08031234567', biller: 'MTN', amount: 1.15 });
    expect(sent.headers['x-api-key']).toBe(key);
    expect(sent.headers['idempotency-key']).toBe('air-key-1');
    expect(sent.headers['content-type']).toBe('application/json');
    const stored = upstream.bills.at(-1)!;
    expect(answer.data!['buyAirtime']).toEqual({
      id: stored.id,
      userId: user.id,
      reference: stored.reference,
      billerCode: 'MTN',
      itemCode: 'MTN-ITEM',
      customer: '08031234567',
      amount: 1.15,
      type: 'AIRTIME',
      status: 'SUCCESS',
      txRef: stored.txRef,
      billerName: 'MTN Airtime',
      validityPeriod: null,
      metadata: null,
      token: null,
      units: null,
      createdAt: stored.createdAt,
    });
  });

  it('pays electricity, and reads what the payment answer leaves out from the record by reference, once', async () => {
    const { key } = await knownUser();
    const before = upstream.requests.length;
    const answer = await graphql(
      key,
      `mutation { payElectricity(input: { meterNumber: "45012345678", disco: "IKEDC", amount: 4.35, saveBeneficiary: true }) {
        reference amount token units updatedAt deletedDate providerData } }`,
    );
    expect(answer.errors).toBeUndefined();
    const stored = upstream.bills.at(-1)!;
    expect(answer.data!['payElectricity']).toEqual({
      reference: stored.reference,
      amount: 4.35,
      token: '1234-5678-9012-3456',
      units: '12.5 kWh',
      updatedAt: stored.updatedAt,
      deletedDate: null,
      providerData: stored.providerData,
    });
    const asked = upstream.requests.slice(before).filter((r) => r.path !== '/api/v1/user/me');
    expect(asked.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v1/bills/pay/electricity',
      `GET /api/v1/bills/records/reference/${stored.reference}`,
    ]);
    expect(JSON.parse(asked[0]!.body)).toEqual({
      meterNumber: '45012345678',
      amount: 4.35,
      disco: 'IKEDC',
      saveBeneficiary: true,
    });
  });

  it('lists records and reads one by reference; a missing one is BILL_NOT_FOUND with its reference', async () => {
    const { key } = await knownUser();
    for (const amount of [100, 250.5])
      await graphql(
        key,
        `mutation { buyAirtime(input: { phoneNumber: "0803", biller: "GLO", amount: ${amount} }) { id } }`,
      );
    const mine = upstream.bills.slice(-2);
    const list = await graphql(
      key,
      `{ billRecords(filter: { status: SUCCESS }, page: 1, limit: 1) { page limit total totalPages hasNext hasPrev bills { reference amount providerData updatedAt } } }`,
    );
    expect(list.errors).toBeUndefined();
    expect(list.data!['billRecords']).toEqual({
      page: 1,
      limit: 1,
      total: 2,
      totalPages: 2,
      hasNext: true,
      hasPrev: false,
      bills: [
        {
          reference: mine[1]!.reference,
          amount: 250.5,
          providerData: mine[1]!.providerData,
          updatedAt: mine[1]!.updatedAt,
        },
      ],
    });
    expect(sentTo('/api/v1/bills/records').at(-1)!.query).toBe('status=SUCCESS&page=1&limit=1');
    const one = await graphql(key, `{ billRecord(reference: "${mine[0]!.reference}") { reference amount } }`);
    expect(one.data!['billRecord']).toEqual({ reference: mine[0]!.reference, amount: 100 });
    const missing = await graphql(key, '{ billRecord(reference: "NOPE-7") { id } }');
    expect(missing.errors![0]!.extensions).toMatchObject({ code: 'BILL_NOT_FOUND', reference: 'NOPE-7' });
    expect(missing.errors![0]!.message).toBe('Bill transaction with reference "NOPE-7" was not found.');
  });

  it("validates a customer, with the limits read exactly from the upstream's numbers", async () => {
    const { key } = await knownUser();
    const answer = await graphql(
      key,
      'mutation { validateBillCustomer(input: { customer: "45012345678", billerCode: "IKEDC", itemCode: "UB1" }) { customerName customer billerCode itemCode minimum maximum address } }',
    );
    expect(answer.data!['validateBillCustomer']).toEqual({
      customerName: 'ADEBAYO OKON',
      customer: '45012345678',
      billerCode: 'IKEDC',
      itemCode: 'UB1',
      minimum: 500,
      maximum: 100000.5,
      address: '12 Allen Avenue, Ikeja',
    });
  });

  it('counts an NGN amount with more than two decimals as an answer not in the spec’s shape', async () => {
    const { key } = await knownUser();
    const faults = facade.services.upstream!.faultCounts().get('bad_answer') ?? 0;
    const answer = await graphql(
      key,
      'mutation { buyAirtime(input: { phoneNumber: "0803", biller: "MTN", amount: 10.125 }) { amount } }',
    );
    expect(answer.errors![0]!.extensions.code).toBe('UPSTREAM_BAD_ANSWER');
    expect(facade.services.upstream!.faultCounts().get('bad_answer')).toBe(faults + 1);
  });

  it("answers the Solana address and the offramp's assets and quote with the spec's requests", async () => {
    const { key } = await knownUser();
    const answer = await graphql(
      key,
      `{ solanaWallet { address } offrampAssets { token network contractAddress decimals }
         offrampQuote(token: USDC, network: arbitrum_one, amount: "250.5", fiat: NGN) { token amount network fiat rate } }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toEqual({
      solanaWallet: { address: SOLANA_ADDRESS },
      offrampAssets: [
        { token: 'USDT', network: 'base', contractAddress: '0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2', decimals: 6 },
        {
          token: 'USDC',
          network: 'polygon',
          contractAddress: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
          decimals: 6,
        },
      ],
      offrampQuote: { token: 'USDC', amount: 250.5, network: 'arbitrum_one', fiat: 'NGN', rate: 1550.25 },
    });
    expect(sentTo('/api/v1/offramp/exchange/quote').at(-1)!.query).toBe(
      'token=USDC&network=arbitrum-one&amount=250.5&fiat=NGN',
    );
  });

  it("quotes a swap with the spec's three query parameters, every field of its quote passed on", async () => {
    const { key } = await knownUser();
    const answer = await graphql(
      key,
      `{ swapQuote(input: { inputMint: "${USDC}", outputMint: "${BONK}", amount: "1.5" }) {
          quoteId swapMode fromToken { address symbol decimals name logoUri } toToken { symbol logoUri }
          amounts { inputAmount outputAmount minOutputAmount inputAmountRaw outputAmountRaw } rates { rate reverseRate usdRate }
          fees { totalFeePercent gasFee totalCost } route { hops dexes tokens efficiencyScore } priceImpact
          usdValues { inputValue outputValue netValue } slippageTolerance expiryTimestamp expiresIn estimatedSwapTime
          network executable warnings rawQuote } }`,
    );
    expect(answer.errors).toBeUndefined();
    expect(sentTo('/api/v1/solana-exchange/quote/token-to-token').at(-1)!.query).toBe(
      `inputMint=${USDC}&outputMint=${BONK}&amount=1.5`,
    );
    expect(answer.data!['swapQuote']).toEqual({
      quoteId: 'q-7f3a',
      swapMode: 'ExactIn',
      fromToken: {
        address: USDC,
        symbol: 'USDC',
        decimals: 6,
        name: 'USD Coin',
        logoUri: 'https://example.ng/usdc.png',
      },
      toToken: { symbol: 'BONK', logoUri: null },
      amounts: {
        inputAmount: '1.5',
        outputAmount: '41000.5',
        minOutputAmount: '40795.49',
        inputAmountRaw: '1500000',
        outputAmountRaw: '4100050000',
      },
      rates: { rate: '27333.66', reverseRate: '0.0000365', usdRate: '1' },
      fees: { totalFeePercent: '0.25', gasFee: '0.000005', totalCost: '0.003755' },
      route: { hops: 2, dexes: ['Orca', 'Raydium'], tokens: [USDC, BONK], efficiencyScore: 93 },
      priceImpact: '0.12',
      usdValues: { inputValue: 1.5, outputValue: 1.49, netValue: 1.49 },
      slippageTolerance: '0.5',
      expiryTimestamp: 1796000000,
      expiresIn: 30,
      estimatedSwapTime: 12,
      network: 'mainnet-beta',
      executable: true,
      warnings: [],
      rawQuote: null,
    });
    // The spec's quote takes no mode, slippage or network: the facade's input has none.
    const slippage = await graphql(
      key,
      `{ swapQuote(input: { inputMint: "${USDC}", outputMint: "${BONK}", amount: "1.5", slippageBps: 50 }) { quoteId } }`,
    );
    expect(slippage.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it("starts a deposit with a payment method with the spec's request, the key forwarded and the amount read exactly", async () => {
    const { key, user } = await knownUser();
    const before = upstream.requests.length;
    // 1.15 is 114.99999999999999 kobo through a float multiplication.
    const answer = await graphql(
      key,
      `mutation { depositWithPaymentMethod(input: { amount: 1.15, paymentMethodId: "pm_card_1", reference: "DEP-mine-1",
          currency: "NGN", redirectUrl: "https://shop.example.ng/back", meta: { order: 7 }, narration: "Top-up" }) { ${DEPOSIT} } }`,
      { 'idempotency-key': 'dep-key-1' },
    );
    expect(answer.errors).toBeUndefined();
    const asked = upstream.requests.slice(before).filter((r) => r.path !== '/api/v1/user/me');
    expect(asked.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/v1/wallet/deposit/payment-method']);
    const sent = asked[0]!;
    expect(JSON.parse(sent.body)).toEqual({
      amount: 1.15,
      paymentMethodId: 'pm_card_1',
      reference: 'DEP-mine-1',
      currency: 'NGN',
      redirectUrl: 'https://shop.example.ng/back',
      meta: { order: 7 },
      narration: 'Top-up',
    });
    expect(sent.headers['x-api-key']).toBe(key);
    expect(sent.headers['idempotency-key']).toBe('dep-key-1');
    expect(answer.data!['depositWithPaymentMethod']).toEqual({
      amount: 1.15,
      amountKobo: 115,
      reference: 'DEP-mine-1',
      currency: 'NGN',
      customization: { title: 'Wallet funding' },
      customer: { email: user.email, phoneNumber: user.phone, name: user.name },
      accountNumber: null,
      bankName: null,
      accountName: null,
      expiry_datetime: '2026-12-31T23:00:00.000Z',
      note: 'Enter your card PIN',
      status: 'PENDING',
      redirectUrl: 'https://shop.example.ng/back',
      narration: 'Top-up',
      nextAction: {
        type: 'requires_pin',
        requires_pin: null,
        requires_otp: null,
        redirect_url: {},
        payment_instruction: {},
      },
    });
    // Only the spec's deposit result is served: this gateway's id, method and timestamps are not in it.
    const id = await graphql(
      key,
      'mutation { depositWithPaymentMethod(input: { amount: 5, paymentMethodId: "pm_1" }) { id } }',
    );
    expect(id.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it("transfers a token and swaps SOL with the spec's requests, each sent once with the caller's key", async () => {
    const { key } = await knownUser();
    const transfer = await graphql(
      key,
      `mutation { transferSolanaToken(input: { to: "${RECIPIENT}", tokenMintAddress: "${USDC}", amount: "1.500001", network: "devnet" }) { signature } }`,
      { 'idempotency-key': 'send-key-1' },
    );
    expect(transfer.errors).toBeUndefined();
    const sentTransfer = sentTo('/api/v1/solana/transfer-token').at(-1)!;
    expect(JSON.parse(sentTransfer.body)).toEqual({
      to: RECIPIENT,
      tokenMintAddress: USDC,
      amount: '1.500001',
      network: 'devnet',
    });
    expect(sentTransfer.headers['x-api-key']).toBe(key);
    expect(sentTransfer.headers['idempotency-key']).toBe('send-key-1');
    expect(transfer.data!['transferSolanaToken']).toEqual({ signature: upstream.solanaSends.at(-1)!.signature });

    // The spec's swap amount is a JSON number: written with the caller's digits, past what a float holds.
    const swap = await graphql(
      key,
      `mutation { swapTokens(input: { inputMint: "${SOL}", outputMint: "${BONK}", amount: "00.123456789012345678", slippageBps: 75 }) { signature txUrl } }`,
      { 'idempotency-key': 'swap-key-1' },
    );
    expect(swap.errors).toBeUndefined();
    const sentSwap = sentTo('/api/v1/solana-exchange/swap-token-to-sol').at(-1)!;
    expect(sentSwap.body).toBe(`{"outputMint":"${BONK}","amount":0.123456789012345678,"slippageBps":75}`);
    expect(sentSwap.headers['idempotency-key']).toBe('swap-key-1');
    const { signature } = upstream.solanaSends.at(-1)!;
    expect(swap.data!['swapTokens']).toEqual({ signature, txUrl: `https://explorer.solana.com/tx/${signature}` });
  });

  it('refuses a swap the spec’s request cannot carry before asking: another input token, an amount that is no decimal, a quote id', async () => {
    const { key } = await knownUser();
    const before = sentTo('/api/v1/solana-exchange/swap-token-to-sol').length;
    const other = await graphql(
      key,
      `mutation { swapTokens(input: { inputMint: "${USDC}", outputMint: "${BONK}", amount: "1" }) { signature } }`,
    );
    expect(other.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'inputMint' });
    const amount = await graphql(
      key,
      `mutation { swapTokens(input: { inputMint: "${SOL}", outputMint: "${BONK}", amount: "1e3" }) { signature } }`,
    );
    expect(amount.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'amount' });
    const quoteId = await graphql(key, 'mutation { swapTokens(input: { quoteId: "q-1" }) { signature } }');
    expect(quoteId.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const status = await graphql(
      key,
      `mutation { swapTokens(input: { inputMint: "${SOL}", outputMint: "${BONK}", amount: "1" }) { status } }`,
    );
    expect(status.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(sentTo('/api/v1/solana-exchange/swap-token-to-sol').length).toBe(before);
  });

  it("creates a business customer with the spec's request, the path's businessId encoded", async () => {
    const { key } = await knownUser();
    const answer = await graphql(
      key,
      `mutation { createBusinessCustomer(businessId: "biz/7", input: { name: "Ada Obi", phone: "+2348031234567", email: "ada@example.ng", externalRef: "crm-9" }) {
          id businessId name phone email externalRef status createdAt updatedAt } }`,
    );
    expect(answer.errors).toBeUndefined();
    const sent = upstream.requests.at(-1)!;
    expect(`${sent.method} ${sent.path}`).toBe('POST /api/v1/customers/biz%2F7');
    expect(JSON.parse(sent.body)).toEqual({
      name: 'Ada Obi',
      phone: '+2348031234567',
      email: 'ada@example.ng',
      externalRef: 'crm-9',
    });
    expect(sent.headers['x-api-key']).toBe(key);
    expect(answer.data!['createBusinessCustomer']).toMatchObject({
      businessId: 'biz/7',
      name: 'Ada Obi',
      phone: '+2348031234567',
      email: 'ada@example.ng',
      externalRef: 'crm-9',
      status: 'active',
    });
    // Its business is not asked of the upstream: the field is not in the facade's graph.
    const business = await graphql(
      key,
      'mutation { createBusinessCustomer(businessId: "biz-1", input: { name: "Ada" }) { business { id } } }',
    );
    expect(business.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  describe.each(OPERATIONS)('%s', (field, document, path) => {
    it.each<[Misbehaviour, string, number | undefined]>([
      ['unauthorized', 'UNAUTHENTICATED', undefined],
      ['forbidden', 'FORBIDDEN', undefined],
      ['not-found', 'NOT_FOUND', undefined],
      ['rate-limit', 'RATE_LIMITED', 7],
      ['server-error', 'UPSTREAM_UNAVAILABLE', undefined],
      ['timeout', 'UPSTREAM_TIMEOUT', undefined],
      ['wrong-shape', 'UPSTREAM_BAD_ANSWER', undefined],
    ])('maps an upstream that answers %s to %s, asking once', async (misbehaviour, code, retryAfter) => {
      const { key, user } = await knownUser();
      // A record to list and look up, so that a wrong shape has something to be wrong in.
      upstream.addBill(user, { reference: 'BILL-X' });
      const before = sentTo(path).length;
      // Only the bill request misbehaves: whose key it is (GET /user/me) is answered well.
      upstream.misbehaviour = misbehaviour;
      upstream.misbehavingPath = path;
      const answer = await graphql(key, document);
      expect(answer.data ?? null).toBeNull();
      expect(answer.errors).toHaveLength(1);
      expect(answer.errors![0]!.extensions.code).toBe(code);
      expect(answer.errors![0]!.path).toEqual([field]);
      expect(answer.errors![0]!.extensions.retryAfter).toBe(retryAfter);
      expect(JSON.stringify(answer)).not.toContain(key);
      // Sent once: a POST whose answer did not come (or came refused) is never sent again.
      expect(sentTo(path).length).toBe(before + 1);
    });
  });

  it("refuses a field the spec's request has no room for, before asking", async () => {
    const { key } = await knownUser();
    const answer = await graphql(
      key,
      'mutation { buyAirtime(input: { phoneNumber: "0803", biller: "MTN", amount: 100, reference: "MINE-1" }) { id } }',
    );
    expect(answer.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(answer.errors![0]!.message).toContain('"reference"');
  });

  it('asks the operations the spec only names where the route map places them, and serves none with UPSTREAM_ROUTES=spec', async () => {
    const { key } = await knownUser();
    const data = 'mutation { buyMobileData(input: { phoneNumber: "0803", biller: "MTN", itemCode: "MD1" }) { id } }';
    // This gateway's own path: an upstream written from the spec alone has none, and says 404.
    const gateway = await graphql(key, data);
    expect(gateway.errors![0]!.extensions.code).toBe('NOT_FOUND');
    expect(sentTo('/api/v1/bills/pay/data').length).toBe(1);
    const spec = await graphql(key, data, {}, specRoutes);
    expect(spec.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(spec.errors![0]!.message).toContain('Cannot query field "buyMobileData" on type "Mutation"');
    expect(sentTo('/api/v1/bills/pay/data').length).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type StartedTestApp, startTestApp, type TestApp } from '../helpers/app.js';
import { fund } from '../helpers/wallet.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';

const SANDBOX_USDC = tokenBySymbol('USDC')!.address;

/** Every BillRecord field a facade serves. */
const BILL = `id nodeId createdAt updatedAt deletedDate userId reference billerCode itemCode customer amount type status
  providerData txRef billerName validityPeriod metadata token units`;

const ME = `{ me { id nodeId createdAt updatedAt deletedDate email phone firstName lastName name haveTransactionPin
  verified resetToken resetTokenExpiry dob isAdmin deviceId deviceIp deviceModel platform lastLoggedIn } }`;

/** Every Deposit field a facade serves (the spec's deposit result). */
const DEPOSIT = `amount amountKobo reference currency customization { title } customer { email phoneNumber name }
  accountNumber bankName accountName expiry_datetime note status redirectUrl narration
  nextAction { type requires_pin requires_otp redirect_url payment_instruction }`;

/** This gateway in service mode as the upstream, and a second one in facade mode in front of it. */
describe('a facade in front of this gateway in service mode', () => {
  let service: StartedTestApp;
  let facade: TestApp;

  beforeAll(async () => {
    service = await startTestApp({ listen: true });
    facade = await createTestApp({ config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: service.baseUrl } });
  });

  afterAll(async () => {
    await facade.close();
    await service.t.close();
  });

  const graphql = (app: TestApp, key: string, query = ME) =>
    app.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: JSON.stringify({ query }),
    });

  it('answers GraphQL me exactly as the upstream does', async () => {
    const key = service.tenant.keys.READ_ONLY;
    const upstream = await graphql(service.t, key);
    const through = await graphql(facade, key);
    expect(upstream.json().errors).toBeUndefined();
    expect(through.json()).toEqual(upstream.json());
    expect(through.json().data.me.id).toBe(service.tenant.user.id);
  });

  it('answers REST GET /api/v1/user/me with the upstream body and status', async () => {
    const key = service.tenant.keys.FULL_ACCESS;
    const direct = await service.t.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    const through = await facade.app.inject({ method: 'GET', url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    expect(through.statusCode).toBe(direct.statusCode);
    expect(through.body).toBe(direct.body);
    expect(through.headers['content-type']).toBe(direct.headers['content-type']);
  });

  it.each([
    ['buyAirtime', 'buyAirtime(input: { phoneNumber: "08031234567", biller: "MTN", amount: 100.5 })'],
    ['payElectricity', 'payElectricity(input: { meterNumber: "45012345678", disco: "AEDC", amount: 1500 })'],
    ['buyMobileData', 'buyMobileData(input: { phoneNumber: "08031234567", biller: "MTN-DATA", itemCode: "MD1041" })'],
    [
      'subscribeCableTv',
      'subscribeCableTv(input: { smartcardNumber: "7012345678", biller: "STARTIMES", itemCode: "CB1231" })',
    ],
  ])('pays with %s through the facade: the answer is the record GraphQL on the upstream gives', async (field, call) => {
    const key = service.tenant.keys.FULL_ACCESS;
    await fund(service.t, service.tenant, 5000);
    const paid = (await graphql(facade, key, `mutation { ${call} { ${BILL} } }`)).json();
    expect(paid.errors, JSON.stringify(paid.errors)).toBeUndefined();
    const record = paid.data[field];
    const direct = (
      await graphql(service.t, key, `{ billRecord(reference: "${record.reference}") { ${BILL} } }`)
    ).json();
    expect(direct.errors).toBeUndefined();
    expect(record).toEqual(direct.data.billRecord);
    expect(record.userId).toBe(service.tenant.user.id);
    const looked = (await graphql(facade, key, `{ billRecord(reference: "${record.reference}") { ${BILL} } }`)).json();
    expect(looked).toEqual(direct);
  });

  it('lists bill records, validates a customer, refuses a missing reference, gives the Solana address and the offramp as GraphQL on the upstream does', async () => {
    const key = service.tenant.keys.FULL_ACCESS;
    await fund(service.t, service.tenant, 5000);
    await graphql(
      service.t,
      key,
      'mutation { buyAirtime(input: { phoneNumber: "08031234567", biller: "GLO", amount: 70.25 }) { id } }',
    );
    for (const query of [
      `{ billRecords(filter: { type: AIRTIME, status: SUCCESS, minAmount: 50 }, page: 1, limit: 2) {
          page limit total totalPages hasNext hasPrev bills { ${BILL} } } }`,
      `{ billRecords(filter: { startDate: "2020-01-01", sortBy: amount, sortOrder: ASC }) { total bills { reference amount } } }`,
      'mutation { validateBillCustomer(input: { customer: "45012345678", billerCode: "BIL204", itemCode: "UB204" }) { customerName customer billerCode itemCode minimum maximum address } }',
      '{ billRecord(reference: "NOPE-1") { id } }',
      '{ solanaWallet { address } }',
      '{ offrampAssets { token network contractAddress decimals } }',
      '{ offrampQuote(token: USDT, network: base, amount: "120.75", fiat: NGN) { token amount network fiat rate } }',
    ]) {
      const direct = (await graphql(service.t, key, query)).json();
      const through = (await graphql(facade, key, query)).json();
      expect(through, query).toEqual(direct);
    }
    // A quote is made afresh on each call (its id and expiry differ): the rest is the same.
    const quote = `{ swapQuote(input: { inputMint: "So11111111111111111111111111111111111111112", outputMint: "${SANDBOX_USDC}", amount: "0.5" }) {
        swapMode fromToken { address symbol decimals name logoUri } toToken { address symbol decimals name }
        amounts { inputAmount outputAmount inputAmountRaw outputAmountRaw } rates { rate } route { hops dexes tokens }
        network executable warnings } }`;
    const directQuote = (await graphql(service.t, key, quote)).json();
    expect(directQuote.errors).toBeUndefined();
    expect((await graphql(facade, key, quote)).json()).toEqual(directQuote);
    // Refused input: the same code and the same field named, in the facade's own words.
    const refused = '{ offrampQuote(token: CNGN, network: base, amount: "0", fiat: NGN) { rate } }';
    const direct = (await graphql(service.t, key, refused)).json();
    const through = (await graphql(facade, key, refused)).json();
    expect(direct.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'amount' });
    expect(through.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'amount' });
    expect(through.errors[0].path).toEqual(['offrampQuote']);
  });

  it.each([
    ['a PIN card', SANDBOX_PAYMENTS.cards.pinThenOtp],
    ['a 3-D Secure card', SANDBOX_PAYMENTS.cards.threeDs],
  ])(
    'starts a deposit with %s through the facade: the answer is the deposit GraphQL on the upstream gives',
    async (_name, number) => {
      const key = service.tenant.keys.FULL_ACCESS;
      const stored = (
        await graphql(
          service.t,
          key,
          `mutation { createPaymentMethod(input: { type: card, card: { number: "${number}", expMonth: 9, expYear: ${new Date().getUTCFullYear() + 2}, cvv: "564" } }) { id } }`,
        )
      ).json();
      expect(stored.errors).toBeUndefined();
      const started = (
        await graphql(
          facade,
          key,
          `mutation { depositWithPaymentMethod(input: { amount: 2500.75, paymentMethodId: "${stored.data.createPaymentMethod.id}",
            redirectUrl: "https://shop.example.ng/back", narration: "Top-up", meta: { order: 7 } }) { ${DEPOSIT} } }`,
        )
      ).json();
      expect(started.errors, JSON.stringify(started.errors)).toBeUndefined();
      const deposit = started.data.depositWithPaymentMethod;
      const direct = (
        await graphql(service.t, key, `{ deposit(reference: "${deposit.reference}") { ${DEPOSIT} } }`)
      ).json();
      expect(direct.errors).toBeUndefined();
      expect(deposit).toEqual(direct.data.deposit);
      expect(deposit).toMatchObject({ amount: 2500.75, amountKobo: 250075, status: 'PENDING' });
      // A stored method the upstream does not know: its refusal, with its code.
      const refused =
        '{ x: depositWithPaymentMethod(input: { amount: 10, paymentMethodId: "00000000-0000-4000-8000-000000000000" }) { reference } }';
      const mutation = `mutation ${refused}`;
      const directRefusal = (await graphql(service.t, key, mutation)).json();
      const throughRefusal = (await graphql(facade, key, mutation)).json();
      expect(throughRefusal.errors[0].extensions.code).toBe(directRefusal.errors[0].extensions.code);
    },
  );

  it('transfers a token and swaps SOL through the facade: each answer is what GraphQL on the upstream gives for that transaction', async () => {
    const key = service.tenant.keys.FULL_ACCESS;
    const funded = (await graphql(service.t, key, 'mutation { sandboxSolanaFaucet { address } }')).json();
    expect(funded.errors, JSON.stringify(funded.errors)).toBeUndefined();
    const to = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
    const sent = (
      await graphql(
        facade,
        key,
        `mutation { transferSolanaToken(input: { to: "${to}", tokenMintAddress: "${SANDBOX_USDC}", amount: "2.5" }) { signature } }`,
      )
    ).json();
    expect(sent.errors, JSON.stringify(sent.errors)).toBeUndefined();
    const transfer = sent.data.transferSolanaToken;
    const direct = (
      await graphql(
        service.t,
        key,
        `{ solanaTransfer(signature: "${transfer.signature}") { signature kind to mint amount } }`,
      )
    ).json();
    expect(direct.data.solanaTransfer).toEqual({ ...transfer, kind: 'token', to, mint: SANDBOX_USDC, amount: '2.5' });

    const swapped = (
      await graphql(
        facade,
        key,
        `mutation { swapTokens(input: { inputMint: "So11111111111111111111111111111111111111112", outputMint: "${SANDBOX_USDC}", amount: "0.25", slippageBps: 100 }) { signature txUrl } }`,
      )
    ).json();
    expect(swapped.errors, JSON.stringify(swapped.errors)).toBeUndefined();
    const swap = swapped.data.swapTokens;
    const directSwap = (
      await graphql(
        service.t,
        key,
        `{ solanaTransfer(signature: "${swap.signature}") { signature txUrl kind mint amount } }`,
      )
    ).json();
    expect(directSwap.data.solanaTransfer).toEqual({
      ...swap,
      kind: 'swap',
      mint: 'So11111111111111111111111111111111111111112',
      amount: '0.25',
    });
    // A refusal by the upstream (a balance too small) reaches the caller with the upstream's own code.
    const tooMuch = `mutation { transferSolanaToken(input: { to: "${to}", tokenMintAddress: "${SANDBOX_USDC}", amount: "999999999" }) { signature } }`;
    const directRefusal = (await graphql(service.t, key, tooMuch)).json();
    const throughRefusal = (await graphql(facade, key, tooMuch)).json();
    expect(directRefusal.errors[0].extensions.code).toBe('INSUFFICIENT_FUNDS');
    expect(throughRefusal.errors[0].extensions.code).toBe(directRefusal.errors[0].extensions.code);
  });

  it('creates a business customer through the facade: the answer is the customer GraphQL on the upstream gives', async () => {
    const key = service.tenant.keys.FULL_ACCESS;
    const { id: businessId } = await service.t.services.users.createBusiness(service.tenant.user.id, 'Ada Stores');
    const fields = 'id nodeId businessId name phone email externalRef status createdAt updatedAt';
    const created = (
      await graphql(
        facade,
        key,
        `mutation { createBusinessCustomer(businessId: "${businessId}", input: { name: "Ada Obi", phone: "+234 803-123-4567", email: "Ada@Example.ng", externalRef: "crm-${Date.now()}" }) { ${fields} } }`,
      )
    ).json();
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    const customer = created.data.createBusinessCustomer;
    const direct = (
      await graphql(
        service.t,
        key,
        `{ businessCustomer(businessId: "${businessId}", id: "${customer.id}") { ${fields} } }`,
      )
    ).json();
    expect(direct.errors).toBeUndefined();
    expect(customer).toEqual(direct.data.businessCustomer);
    // Refused input: the same code and the same field named.
    const refused = `mutation { createBusinessCustomer(businessId: "${businessId}", input: { name: "" }) { id } }`;
    const directRefusal = (await graphql(service.t, key, refused)).json();
    const throughRefusal = (await graphql(facade, key, refused)).json();
    expect(directRefusal.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'name' });
    expect(throughRefusal.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'name' });
  });

  it('refuses a key the upstream does not know as the upstream does: 401 on REST, UNAUTHENTICATED on GraphQL', async () => {
    const rest = await facade.app.inject({
      method: 'GET',
      url: '/api/v1/user/me',
      headers: { 'x-api-key': 'pk_unknown' },
    });
    expect(rest.statusCode).toBe(401);
    expect(rest.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    const graph = await graphql(facade, 'pk_unknown');
    expect(graph.json().errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

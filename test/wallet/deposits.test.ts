import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { paymentMethods } from '../../src/db/wallet-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { DomainError } from '../../src/domain/errors.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { DepositExpiryHandler, DepositSandboxArrivalHandler } from '../../src/domain/wallet/wallet-jobs.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp, type Tenant } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { principalOf } from '../helpers/principal.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

const card = (number: string) => ({
  type: 'card',
  card: { number, expMonth: 9, expYear: new Date().getUTCFullYear() + 3, cvv: '564' },
});

describe('payment methods and deposits', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    runner = new JobRunner(s.t.services.db, clock, [
      new DepositSandboxArrivalHandler(s.t.services.deposits),
      new DepositExpiryHandler(s.t.services.deposits),
    ]);
  });
  afterAll(() => s.t.close());
  beforeEach(() => clock.set(new Date()));

  async function storedCard(tenant: Tenant, number: string): Promise<string> {
    const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/payment-methods', card(number));
    expect(created.statusCode, created.body).toBe(201);
    return created.json().data.id;
  }

  describe('payment methods', () => {
    it('stores a card only as a token with brand, last four and expiry; never its number or CVV', async () => {
      const tenant = await seedTenant(s.t.services);
      const created = await rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT)(
        'POST',
        '/api/v1/payment-methods',
        card(SANDBOX_PAYMENTS.cards.pinThenOtp),
      );
      expect(created.json().data).toMatchObject({
        type: 'card',
        brand: 'mastercard',
        last4: '2950',
        expMonth: 9,
        isDefault: true,
      });
      const [row] = await s.t.services.db
        .select()
        .from(paymentMethods)
        .where(eq(paymentMethods.id, created.json().data.id));
      const values = Object.values(row!).map((v) => String(v));
      expect(values.some((v) => v.includes(SANDBOX_PAYMENTS.cards.pinThenOtp))).toBe(false);
      // The CVV may not be stored anywhere in the row: no column holds it.
      expect(Object.keys(row!).some((k) => /cvv|number$/i.test(k) && k !== 'accountNumber')).toBe(false);
      expect(row!.providerToken).toMatch(/^sbx_card_pinThenOtp_/);
      expect(JSON.stringify(created.json())).not.toContain(SANDBOX_PAYMENTS.cards.pinThenOtp);
    });

    it('lists, gets, sets the default, deletes (the next becomes default) and refuses bad cards and accounts', async () => {
      const tenant = await seedTenant(s.t.services);
      const manage = rest(s.t, tenant.keys.ACCOUNT_MANAGEMENT);
      const first = await storedCard(tenant, SANDBOX_PAYMENTS.cards.noAuth);
      const bank = await manage('POST', '/api/v1/payment-methods', {
        type: 'bank_account',
        bankAccount: { bankCode: '044', accountNumber: '0690000040' },
      });
      expect(bank.json().data).toMatchObject({
        type: 'bank_account',
        bankName: 'Access Bank',
        accountName: 'Alexis Sanchez',
        isDefault: false,
      });
      const second = bank.json().data.id;
      const setDefault = await manage('POST', `/api/v1/payment-methods/${second}/default`);
      expect(setDefault.statusCode).toBe(200);
      const listed = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/payment-methods')).json().data;
      expect(listed.map((m: { id: string; isDefault: boolean }) => [m.id, m.isDefault])).toEqual([
        [first, false],
        [second, true],
      ]);
      expect(
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/payment-methods/${first}`)).json().data.last4,
      ).toBe('7499');
      expect((await manage('DELETE', `/api/v1/payment-methods/${second}`)).statusCode).toBe(200);
      expect(
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/payment-methods/${first}`)).json().data.isDefault,
      ).toBe(true);
      expect((await rest(s.t, tenant.keys.READ_ONLY)('GET', `/api/v1/payment-methods/${second}`)).statusCode).toBe(404);
      expect((await rest(s.t, s.tenant.keys.READ_ONLY)('GET', `/api/v1/payment-methods/${first}`)).statusCode).toBe(
        404,
      );
      for (const [body, field] of [
        [card('1234567812345678'), 'card.number'],
        [{ type: 'card', card: { ...card(SANDBOX_PAYMENTS.cards.noAuth).card, expYear: 2020 } }, 'card.expYear'],
        [{ type: 'card', card: { ...card(SANDBOX_PAYMENTS.cards.noAuth).card, cvv: '12' } }, 'cvv'],
        [{ type: 'card' }, 'card'],
        [
          { type: 'bank_account', bankAccount: { bankCode: '044', accountNumber: SANDBOX_PAYMENTS.unknownAccount } },
          'accountNumber',
        ],
        [{ type: 'paypal' }, 'type'],
      ] as const) {
        const response = await manage('POST', '/api/v1/payment-methods', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json().message, JSON.stringify(body)).toContain(field);
      }
      expect(
        (
          await rest(s.t, tenant.keys.TRANSACTIONS)(
            'POST',
            '/api/v1/payment-methods',
            card(SANDBOX_PAYMENTS.cards.noAuth),
          )
        ).statusCode,
      ).toBe(403);
    });
  });

  describe('deposits', () => {
    it("runs the seed's deposit with a PIN-then-OTP card: nextAction requires_pin, then requires_otp, then credited once", async () => {
      const tenant = await seedTenant(s.t.services);
      const methodId = await storedCard(tenant, SANDBOX_PAYMENTS.cards.pinThenOtp);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      const started = await call('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 2500,
        paymentMethodId: methodId,
        reference: 'DEP-pin',
        currency: 'NGN',
        redirectUrl: 'https://partner.example/done',
        meta: { orderId: 7 },
        narration: 'top up',
      });
      expect(started.statusCode).toBe(201);
      expect(started.json()).toMatchObject({ statusCode: 201, message: 'Deposit initiated successfully', errors: {} });
      expect(started.json().data).toMatchObject({
        amount: 2500,
        reference: 'DEP-pin',
        currency: 'NGN',
        status: 'PENDING',
        redirectUrl: 'https://partner.example/done',
        narration: 'top up',
        customer: { email: tenant.user.email, phoneNumber: '+2348030000000', name: 'Ada Obi' },
        nextAction: { type: 'requires_pin' },
      });
      const wrongStep = await call('POST', '/api/v1/wallet/deposits/DEP-pin/authorize', { type: 'otp', otp: '12345' });
      expect(wrongStep.statusCode).toBe(400);
      const pin = await call('POST', '/api/v1/wallet/deposits/DEP-pin/authorize', {
        type: 'pin',
        pin: SANDBOX_PAYMENTS.pin,
      });
      expect(pin.json().data).toMatchObject({ status: 'PENDING', nextAction: { type: 'requires_otp' } });
      const otp = await call('POST', '/api/v1/wallet/deposits/DEP-pin/authorize', {
        type: 'otp',
        otp: SANDBOX_PAYMENTS.otp,
      });
      expect(otp.json().data).toMatchObject({ status: 'COMPLETED', nextAction: null });
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 250_000 });
      const again = await call('POST', '/api/v1/wallet/deposits/DEP-pin/authorize', {
        type: 'otp',
        otp: SANDBOX_PAYMENTS.otp,
      });
      expect(again.statusCode).toBe(409);
      const events = await eventsOf(s.t, tenant, 'deposit.', 3);
      expect(events.map((e) => e.type)).toEqual(['deposit.initiated', 'deposit.pending', 'deposit.completed']);
      expect(events[2]!.data).toMatchObject({
        reference: 'DEP-pin',
        status: 'COMPLETED',
        amount: 2500,
        currency: 'NGN',
        method: 'card',
      });
    });

    it('fails a deposit on a wrong PIN, a declined card, and completes a 3DS card after its redirect', async () => {
      const tenant = await seedTenant(s.t.services);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      const pinCard = await storedCard(tenant, SANDBOX_PAYMENTS.cards.pinThenOtp);
      await call('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 100,
        paymentMethodId: pinCard,
        reference: 'DEP-badpin',
      });
      const bad = await call('POST', '/api/v1/wallet/deposits/DEP-badpin/authorize', { type: 'pin', pin: '0000' });
      expect(bad.json().data).toMatchObject({ status: 'FAILED', failureReason: 'Incorrect PIN.' });
      const declined = await call('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 100,
        paymentMethodId: await storedCard(tenant, SANDBOX_PAYMENTS.cards.declined),
        reference: 'DEP-declined',
      });
      expect(declined.json().data).toMatchObject({
        status: 'FAILED',
        failureReason: expect.stringContaining('declined'),
      });
      const threeDs = await call('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 300,
        paymentMethodId: await storedCard(tenant, SANDBOX_PAYMENTS.cards.threeDs),
        reference: 'DEP-3ds',
      });
      expect(threeDs.json().data.nextAction).toMatchObject({
        type: 'redirect_url',
        redirect_url: { url: expect.stringContaining('https://') },
      });
      const authorized = await call('POST', '/api/v1/wallet/deposits/DEP-3ds/authorize', { type: 'three_ds' });
      expect(authorized.json().data.status).toBe('COMPLETED');
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 30_000 });
      expect(
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/deposits/DEP-declined')).json().data.status,
      ).toBe('FAILED');
      expect((await rest(s.t, s.tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/deposits/DEP-3ds')).statusCode).toBe(404);
    });

    it('gives a transfer account with an expiry; the sandbox transfer arrives later, and one that never arrives expires', async () => {
      const tenant = await seedTenant(s.t.services);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      const started = await call('POST', '/api/v1/wallet/deposits/bank-transfer', {
        amount: 1200,
        reference: 'DEP-bt',
      });
      const data = started.json().data;
      expect(data).toMatchObject({
        status: 'PENDING',
        method: 'bank_transfer',
        accountNumber: expect.stringMatching(/^\d{10}$/),
        bankName: 'Sandbox Bank',
        note: expect.stringContaining('1200.00'),
      });
      expect(new Date(data.expiry_datetime).getTime() - clock.now().getTime()).toBe(
        SANDBOX_PAYMENTS.transferAccountMinutes * 60_000,
      );
      await call('POST', '/api/v1/wallet/deposits/bank-transfer', {
        amount: Number(SANDBOX_PAYMENTS.neverArrivesKobo) / 100,
        reference: 'DEP-never',
      });
      clock.advance(SANDBOX_PAYMENTS.arrivalSeconds * 1000);
      await runner.runDueJobs();
      expect((await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/deposits/DEP-bt')).json().data.status).toBe(
        'COMPLETED',
      );
      expect(
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/deposits/DEP-never')).json().data.status,
      ).toBe('PENDING');
      clock.advance(SANDBOX_PAYMENTS.transferAccountMinutes * 60_000);
      await runner.runDueJobs();
      expect(
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/deposits/DEP-never')).json().data,
      ).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('expired') });
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 120_000 });
    });

    it('takes USSD and payment-link deposits and the fund-wallet route for each method', async () => {
      const tenant = await seedTenant(s.t.services);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      const ussd = await call('POST', '/api/v1/wallet/deposits/ussd', { amount: 50, bankCode: '058' });
      expect(ussd.json().data).toMatchObject({
        status: 'PENDING',
        method: 'ussd',
        nextAction: {
          type: 'payment_instruction',
          payment_instruction: { note: expect.stringMatching(/^Dial \*737\*/) },
        },
      });
      const link = await call('POST', '/api/v1/wallet/deposits/payment-link', {
        amount: 70,
        redirectUrl: 'https://partner.example/back',
        title: 'Top up',
      });
      expect(link.json().data).toMatchObject({
        status: 'PENDING',
        method: 'payment_link',
        nextAction: { type: 'redirect_url', redirect_url: { url: expect.stringContaining('/pay/') } },
      });
      const viaFund = await call('POST', '/api/v1/wallet/fund', { amount: 30, method: 'bank_transfer' });
      expect(viaFund.json().data).toMatchObject({ method: 'bank_transfer', status: 'PENDING' });
      const cardFund = await call('POST', '/api/v1/wallet/fund', {
        amount: 5,
        method: 'card',
        paymentMethodId: await storedCard(tenant, SANDBOX_PAYMENTS.cards.noAuth),
      });
      expect(cardFund.json().data).toMatchObject({ method: 'card', status: 'COMPLETED' });
      const noLink = await call('POST', '/api/v1/wallet/fund', { amount: 5, method: 'payment_link' });
      expect(noLink.json().message).toContain('redirectUrl');
      const noBank = await call('POST', '/api/v1/wallet/fund', { amount: 5, method: 'ussd' });
      expect(noBank.json().message).toContain('bankCode');
      expect(
        (await call('POST', '/api/v1/wallet/deposits/ussd', { amount: 5, bankCode: '000' })).json().message,
      ).toContain('bankCode');
      clock.advance(SANDBOX_PAYMENTS.arrivalSeconds * 1000);
      await runner.runDueJobs();
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 15_500 });
    });

    it('creates one permanent virtual account per user; transfers into it are deposits', async () => {
      const tenant = await seedTenant(s.t.services);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      const first = (await call('POST', '/api/v1/wallet/virtual-account')).json().data;
      const second = (await call('POST', '/api/v1/wallet/virtual-account')).json().data;
      expect(first).toEqual(second);
      expect(first).toMatchObject({
        accountNumber: expect.stringMatching(/^\d{10}$/),
        bankName: 'Sandbox Bank',
        accountName: 'Ada Obi',
      });
      const arrived = await call('POST', '/api/v1/wallet/sandbox/virtual-account/transfer', { amount: 99.99 });
      expect(arrived.json().data).toMatchObject({
        method: 'virtual_account',
        status: 'COMPLETED',
        amount: 99.99,
        accountNumber: first.accountNumber,
      });
      const production = await rest(s.t, tenant.productionKey)(
        'POST',
        '/api/v1/wallet/sandbox/virtual-account/transfer',
        { amount: 1 },
      );
      expect(production.statusCode).toBe(400);
      expect(production.json().message).toContain('sandbox');
      // Production without a configured provider answers 503, naming the setting.
      const unconfigured = await rest(s.t, tenant.productionKey)('GET', '/api/v1/wallet/banks');
      expect(unconfigured.statusCode).toBe(503);
      expect(unconfigured.json().message).toContain('FLUTTERWAVE');
    });

    it('credits a deposit exactly once however many times (and however concurrently) its completion arrives', async () => {
      const tenant = await seedTenant(s.t.services);
      const started = await rest(s.t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/deposits/bank-transfer', {
        amount: 400,
        reference: 'DEP-dup',
      });
      const id = started.json().data.id;
      await Promise.all(
        Array.from({ length: 8 }, () => s.t.services.deposits.apply(id, { providerRef: 'x', status: 'succeeded' })),
      );
      await s.t.services.deposits.apply(id, { providerRef: 'x', status: 'succeeded' });
      await s.t.services.deposits.apply(id, { providerRef: 'x', status: 'failed', reason: 'late failure notice' });
      expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 40_000 });
      expect(
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/deposits/DEP-dup')).json().data.status,
      ).toBe('COMPLETED');
      expect((await eventsOf(s.t, tenant, 'deposit.', 3)).map((e) => e.type)).toEqual([
        'deposit.initiated',
        'deposit.pending',
        'deposit.completed',
      ]);
      expect(await ledger.totalOf(s.t.services.db, 'sandbox')).toBe(0n);
    });

    it('refuses bad deposit input with 400 naming the field, and replays retried keys', async () => {
      const tenant = await seedTenant(s.t.services);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      for (const [body, field] of [
        [{ amount: -1 }, 'amount'],
        [{ amount: 0 }, 'amount'],
        [{ amount: 1.001 }, 'amount'],
        [{ amount: '5' }, 'amount'],
        [{ amount: 20_000_000 }, 'amount'],
        [{ amount: 5, currency: 'USD' }, 'currency'],
        [{ amount: 5, reference: 'x y' }, 'reference'],
        [{ amount: 5, narration: 'n'.repeat(141) }, 'narration'],
      ] as const) {
        const response = await call('POST', '/api/v1/wallet/deposits/bank-transfer', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json().message, JSON.stringify(body)).toContain(field);
      }
      const missingMethod = await call('POST', '/api/v1/wallet/deposit/payment-method', {
        amount: 5,
        paymentMethodId: '00000000-0000-4000-8000-000000000000',
      });
      expect(missingMethod.statusCode).toBe(404);
      const key = { 'idempotency-key': `dep-${tenant.user.id}` };
      const one = await call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 10 }, key);
      const two = await call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 10 }, key);
      expect(two.json().data).toEqual(one.json().data);
      expect((await call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 11 }, key)).statusCode).toBe(422);
    });

    it('refuses a reference its owner already used, naming the transaction, and writes nothing', async () => {
      const tenant = await seedTenant(s.t.services);
      const call = rest(s.t, tenant.keys.TRANSACTIONS);
      const first = await call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 10, reference: 'DEP-once' });
      expect(first.statusCode).toBe(201);
      const held = (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/transactions/reference/DEP-once')).json()
        .data;
      const transactions = async () =>
        (await rest(s.t, tenant.keys.READ_ONLY)('GET', '/api/v1/transactions')).json().data.transactions.length;
      expect(await transactions()).toBe(1);

      const again = await call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 12, reference: 'DEP-once' });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ details: [{ field: 'reference' }] });
      expect(again.json().message).toContain(held.id);
      expect(await transactions()).toBe(1);
      expect((await eventsOf(s.t, tenant, 'deposit.', 2)).map((e) => e.type)).toEqual([
        'deposit.initiated',
        'deposit.pending',
      ]);

      // At once: one deposit, and a 409 naming the field for each of the others (on PostgreSQL a
      // loser may wait for the winner's row; deposit-reference.pg.test.ts pins that interleaving).
      const racing = await Promise.all(
        [13, 14, 15].map((amount) =>
          call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount, reference: 'DEP-race' }),
        ),
      );
      expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
      expect(await transactions()).toBe(2);
      for (const refused of racing.filter((r) => r.statusCode === 409))
        expect(refused.json()).toMatchObject({ details: [{ field: 'reference' }] });
    });

    it('refuses a reference another kind of transaction holds, naming it, and closes the virtual-account space', async () => {
      const payer = await seedTenant(s.t.services);
      const payee = await seedTenant(s.t.services);
      await fund(s.t, payer, 100);
      const transfer = await rest(s.t, payer.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', {
        amount: 10,
        recipient: payee.user.id,
        reference: 'SHARED-1',
      });
      expect(transfer.statusCode, transfer.body).toBe(201);
      const holder = (await rest(s.t, payer.keys.READ_ONLY)('GET', '/api/v1/transactions/reference/SHARED-1')).json()
        .data;
      const call = rest(s.t, payer.keys.TRANSACTIONS);
      const key = { 'idempotency-key': `shared-${payer.user.id}` };
      const deposit = () =>
        call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 5, reference: 'SHARED-1' }, key);
      const refused = await deposit();
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({ details: [{ field: 'reference' }] });
      expect(refused.json().message).toContain(holder.id);
      // The key keeps the refusal.
      const again = await deposit();
      expect(again.statusCode).toBe(409);
      expect(again.json().message).toBe(refused.json().message);

      // A reference in the space of transfers into virtual accounts could keep one from being credited.
      for (const [path, body] of [
        ['/api/v1/wallet/deposits/bank-transfer', { amount: 5, reference: 'VA-123' }],
        ['/api/v1/wallet/transfer', { amount: 1, recipient: payee.user.id, reference: 'VA-123' }],
      ] as const) {
        const reserved = await call('POST', path, body);
        expect(reserved.statusCode, path).toBe(400);
        expect(reserved.json().message, path).toContain('reserved');
      }
    });

    it('refuses by name a transfer into a virtual account whose reference an older row holds, crediting nothing', async () => {
      const tenant = await seedTenant(s.t.services);
      const principal = principalOf(tenant.user.id);
      const account = await s.t.services.deposits.permanentAccount(principal);
      // A row written before references starting with VA- were closed to callers.
      await s.t.services.db.execute(sql`insert into deposits (user_id, environment, reference, method, amount, provider)
        values (${tenant.user.id}::uuid, 'sandbox', 'VA-prov-legacy', 'bank_transfer', 100, 'sandbox')`);
      // The transfer is refused with a 409 naming its reference, and credits nothing.
      const expectRefused = async (providerRef: string) => {
        const refused = await s.t.services.deposits
          .receiveIntoVirtualAccount('sandbox', account.accountNumber, 5_000n, providerRef)
          .catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(DomainError);
        expect((refused as DomainError).code).toBe('CONFLICT');
        expect((refused as DomainError).message).toContain(`VA-${providerRef}`);
        expect(await balanceOf(s.t, tenant)).toMatchObject({ availableKobo: 0 });
      };
      await expectRefused('prov-legacy');
      // Held by an older wallet transaction (a transfer's) instead: refused by name too, not a 500.
      await s.t.services.db.execute(sql`insert into wallet_transactions (user_id, environment, type, status, amount, reference, description)
        values (${tenant.user.id}::uuid, 'sandbox', 'TRANSFER_OUT', 'COMPLETED', 100, 'VA-prov-older', 'older transfer')`);
      await expectRefused('prov-older');
      expect(await s.t.services.deposits.get(principal, 'VA-prov-older').catch(() => undefined)).toBeUndefined();
    });

    it('serves deposits and payment methods over GraphQL', async () => {
      const tenant = await seedTenant(s.t.services);
      const created = await graphql(
        s.t.app,
        tenant.keys.ACCOUNT_MANAGEMENT,
        `mutation { createPaymentMethod(input: { type: card, card: { number: "${SANDBOX_PAYMENTS.cards.pinThenOtp}", expMonth: 9, expYear: ${new Date().getUTCFullYear() + 2}, cvv: "564" } }) { id brand last4 isDefault } }`,
      );
      const methodId = created.body.data!.createPaymentMethod.id;
      const key = tenant.keys.FULL_ACCESS;
      const started = await graphql(
        s.t.app,
        key,
        `mutation { depositWithPaymentMethod(input: { amount: 10, paymentMethodId: "${methodId}", reference: "G-DEP" }) { status nextAction { type requires_pin } customer { name } } }`,
      );
      expect(started.body.data!.depositWithPaymentMethod).toEqual({
        status: 'PENDING',
        nextAction: { type: 'requires_pin', requires_pin: {} },
        customer: { name: 'Ada Obi' },
      });
      await graphql(
        s.t.app,
        key,
        'mutation { authorizeDeposit(reference: "G-DEP", input: { type: pin, pin: "3310" }) { status } }',
      );
      const done = await graphql(
        s.t.app,
        key,
        'mutation { authorizeDeposit(reference: "G-DEP", input: { type: otp, otp: "12345" }) { status amountKobo } }',
      );
      expect(done.body.data!.authorizeDeposit).toEqual({ status: 'COMPLETED', amountKobo: 1000 });
      const others = await graphql(
        s.t.app,
        key,
        `mutation { depositByBankTransfer(input: { amount: 1 }) { method } depositByUssd(input: { amount: 1, bankCode: "044" }) { method }
          createPaymentLink(input: { amount: 1, redirectUrl: "https://p.example" }) { method } fundWallet(input: { amount: 1, method: ussd, bankCode: "057" }) { method }
          createVirtualAccount { accountNumber } simulateVirtualAccountTransfer(amount: 2) { status }
          setDefaultPaymentMethod(id: "${methodId}") { isDefault } }`,
      );
      expect(others.body.errors).toBeUndefined();
      const read = await graphql(
        s.t.app,
        key,
        `{ deposit(reference: "G-DEP") { status } paymentMethods { id } paymentMethod(id: "${methodId}") { last4 } }`,
      );
      expect(read.body.data).toEqual({
        deposit: { status: 'COMPLETED' },
        paymentMethods: [{ id: methodId }],
        paymentMethod: { last4: '2950' },
      });
      const removed = await graphql(s.t.app, key, `mutation { deletePaymentMethod(id: "${methodId}") { id } }`);
      expect(removed.body.data!.deletePaymentMethod.id).toBe(methodId);
      await fund(s.t, tenant, 1);
    });
  });
});

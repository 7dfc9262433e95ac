import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { OfframpExpiryHandler, OfframpSandboxStepHandler } from '../../src/domain/offramp/offramp-jobs.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { PayoutReconcileHandler } from '../../src/domain/wallet/wallet-jobs.js';
import { graphql, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

/** The kinds the API specification lists (its event table): the gateway must emit every one. */
const SEED_KINDS = [
  'deposit.initiated',
  'deposit.pending',
  'deposit.completed',
  'deposit.failed',
  'payout.initiated',
  'payout.processing',
  'payout.completed',
  'payout.failed',
  'offramp.initiated',
  'offramp.deposit_received',
  'offramp.processing',
  'offramp.fiat_sent',
  'offramp.completed',
  'offramp.failed',
  'transaction.created',
  'transaction.updated',
  'transaction.completed',
  'transaction.failed',
  'bill.payment.successful',
];

describe('event kinds', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  let runner: JobRunner;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
    runner = new JobRunner(s.t.services.db, clock, [
      new PayoutReconcileHandler(s.t.services.payouts, clock),
      new OfframpSandboxStepHandler(s.t.services.offramp),
      new OfframpExpiryHandler(s.t.services.offramp),
    ]);
  });
  afterAll(() => s.t.close());

  /**
   * The tenant's events once `until` holds for them: the relay stamps an event only after every
   * older transaction in the cluster ends, so under load the last ones can take a moment.
   */
  async function events(
    until: (events: Array<{ type: string; data: Record<string, any> }>) => boolean,
  ): Promise<Array<{ type: string; data: Record<string, any> }>> {
    let seen: Array<{ type: string; data: Record<string, any> }> = [];
    await waitUntil(async () => {
      await stampCommittedEvents(s.t.services.db, { wait: true });
      const { body } = await graphql(
        s.t.app,
        s.tenant.keys.READ_ONLY,
        '{ events(first: 200) { events { type data } } }',
      );
      seen = body.data!.events.events;
      return until(seen);
    }, 20_000).catch(() => undefined);
    return seen;
  }

  it('transaction.updated tells each step of a card deposit and a payout accepted by the provider, with its stage', async () => {
    const call = rest(s.t, s.tenant.keys.FULL_ACCESS);
    const method = await call('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: {
        number: SANDBOX_PAYMENTS.cards.pinThenOtp,
        expMonth: 9,
        expYear: new Date().getUTCFullYear() + 3,
        cvv: '123',
      },
    });
    const deposit = await call('POST', '/api/v1/wallet/deposit/payment-method', {
      amount: 500,
      paymentMethodId: method.json().data.id,
      reference: 'DEP-UPDATED',
    });
    expect(deposit.statusCode, deposit.body).toBe(201);
    const authorize = `/api/v1/wallet/deposits/DEP-UPDATED/authorize`;
    await call('POST', authorize, { type: 'pin', pin: SANDBOX_PAYMENTS.pin });
    await call('POST', authorize, { type: 'otp', otp: SANDBOX_PAYMENTS.otp });
    const timedOut = await call('POST', '/api/v1/wallet/withdraw', {
      amount: 100,
      bankCode: '044',
      accountNumber: SANDBOX_PAYMENTS.payouts.timeoutAccount,
      reference: 'PO-UPDATED',
    });
    expect(timedOut.json().data.status).toBe('processing');

    const seen = (
      await events(
        (all) =>
          all.some((e) => e.type === 'transaction.completed' && e.data.reference === 'DEP-UPDATED') &&
          all.some((e) => e.type === 'transaction.updated' && e.data.reference === 'PO-UPDATED'),
      )
    ).filter((e) => e.type.startsWith('transaction.') && ['DEP-UPDATED', 'PO-UPDATED'].includes(e.data.reference));
    const deposits = seen.filter((e) => e.data.reference === 'DEP-UPDATED');
    expect(deposits.map((e) => [e.type, e.data.stage ?? null, e.data.status])).toEqual([
      ['transaction.created', null, 'PENDING'],
      ['transaction.updated', 'requires_pin', 'PENDING'],
      ['transaction.updated', 'requires_otp', 'PENDING'],
      ['transaction.completed', null, 'COMPLETED'],
    ]);
    // Each one a new version of the transaction, so a consumer can order them.
    expect(deposits.map((e) => e.data.version)).toEqual([1, 2, 3, 4]);
    expect(seen.filter((e) => e.data.reference === 'PO-UPDATED').map((e) => [e.type, e.data.stage ?? null])).toEqual([
      ['transaction.created', null],
      ['transaction.updated', 'processing'],
    ]);
  });

  it('every kind the specification lists occurs', async () => {
    const call = rest(s.t, s.tenant.keys.FULL_ACCESS);
    await fund(s.t, s.tenant, 5000);
    // Deposits: a declined card fails; a transfer account stays pending.
    const declined = await call('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: {
        number: SANDBOX_PAYMENTS.cards.declined,
        expMonth: 9,
        expYear: new Date().getUTCFullYear() + 3,
        cvv: '123',
      },
    });
    await call('POST', '/api/v1/wallet/deposit/payment-method', {
      amount: 50,
      paymentMethodId: declined.json().data.id,
    });
    await call('POST', '/api/v1/wallet/deposits/bank-transfer', { amount: 70 });
    // Payouts: one completes, one fails; the timed-out one above is processing.
    await call('POST', '/api/v1/wallet/withdraw', { amount: 100, bankCode: '044', accountNumber: '0690000040' });
    await call('POST', '/api/v1/wallet/withdraw', {
      amount: 100,
      bankCode: '044',
      accountNumber: SANDBOX_PAYMENTS.payouts.failingAccount,
    });
    // A bill.
    const bill = await call('POST', '/api/v1/bills/buy-airtime', {
      phoneNumber: '08031234567',
      biller: 'mtn',
      amount: 200,
    });
    expect(bill.statusCode, bill.body).toBe(201);
    // Offramp: one order walks to completed; one is never paid and expires (offramp.failed).
    const order = (reference: string) => ({
      token: 'USDT',
      network: 'arbitrum-one',
      amount: '25.5',
      fiat: 'NGN',
      recipient: { institution: 'GTBINGLA', accountNumber: '0123456789', accountName: 'Chidi Okafor' },
      reference,
    });
    expect((await call('POST', '/api/v1/offramp/exchange/orders', order('OFR-KINDS-1'))).statusCode).toBe(201);
    expect((await call('POST', '/api/v1/offramp/exchange/orders', order('OFR-KINDS-2'))).statusCode).toBe(201);
    await call('POST', '/api/v1/offramp/sandbox/orders/OFR-KINDS-1/deposit');
    for (let step = 0; step < 4; step++) {
      clock.advance(5_000);
      await runner.runDueJobs();
    }
    clock.advance(2 * 60 * 60_000);
    await runner.runDueJobs();

    const kinds = new Set(
      (await events((all) => SEED_KINDS.every((k) => all.some((e) => e.type === k)))).map((e) => e.type),
    );
    expect(SEED_KINDS.filter((k) => !kinds.has(k))).toEqual([]);
    expect(SEED_KINDS).toHaveLength(19);
  });
});

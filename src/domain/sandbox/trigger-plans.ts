import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { BillsService } from '../bills/bills-service.js';
import { SANDBOX_BILLS } from '../bills/sandbox-bills-provider.js';
import { isFinal, type OfframpStatus } from '../offramp/catalogue.js';
import { nextSandboxStep } from '../offramp/offramp-jobs.js';
import { type OfframpService, SANDBOX_STEP_SECONDS } from '../offramp/offramp-service.js';
import { SANDBOX_OFFRAMP } from '../offramp/sandbox-offramp-provider.js';
import { SANDBOX_PAYMENTS } from '../payments/sandbox-payments-provider.js';
import type { DepositService } from '../wallet/deposit-service.js';
import { PAYOUT_FEE_KOBO, type PayoutService } from '../wallet/payout-service.js';
import type { TriggerableKind } from './trigger-kinds.js';

/** The services whose sandbox operations cause the events. */
export interface TriggerServices {
  deposits: DepositService;
  payouts: PayoutService;
  bills: BillsService;
  offramp: OfframpService;
}

/** A record an operation made: its events carry its `reference`; none is older than `createdAt`. */
export interface CausedRecord {
  reference: string;
  createdAt: Date;
}

/**
 * What one trigger runs. `keyOf(step)` is the Idempotency-Key of each step, derived from the
 * caller's (undefined without one), so a retry after a failure part-way replays the steps done.
 */
interface PlanRun {
  services: TriggerServices;
  principal: Principal;
  keyOf: (step: string) => string | undefined;
  now: Date;
}

export interface TriggerPlan {
  /** What the trigger does, said in the answer and in docs/sandbox.md. */
  does: string;
  run(run: PlanRun): Promise<CausedRecord[]>;
}

/** Naira each operation moves: small, and the same every time. */
const AMOUNT_NAIRA = 1000;
const BILL_NAIRA = 100;
const PAYOUT_FEE_NAIRA = Number(PAYOUT_FEE_KOBO) / 100;
const NARRATION = 'Sandbox event trigger';
/** ₦1,025.00, as the docs write naira. */
const shown = (naira: number) => `₦${naira.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;

// A replayed answer (a step under a key already answered) carries its dates as text.
const caused = (row: { reference: string; createdAt: Date | string }): CausedRecord => ({
  reference: row.reference,
  createdAt: new Date(row.createdAt),
});

/** Money in the wallet first, as a transfer into the virtual account: what pays a payout or a bill. */
async function fund({ services, principal, keyOf }: PlanRun, naira: number): Promise<CausedRecord> {
  return caused(await services.deposits.simulateVirtualAccountTransfer(principal, naira, keyOf('fund')));
}

const bankTransferDeposit: TriggerPlan = {
  does: `A ${shown(AMOUNT_NAIRA)} bank-transfer deposit: the account to pay is issued at once (pending); the sandbox payer pays it ${SANDBOX_PAYMENTS.arrivalSeconds} s later (deposit.completed).`,
  run: async ({ services, principal, keyOf }) => [
    caused(
      await services.deposits.bankTransfer(principal, { amount: AMOUNT_NAIRA, narration: NARRATION }, keyOf('deposit')),
    ),
  ],
};

const virtualAccountTransfer: TriggerPlan = {
  does: `A ${shown(AMOUNT_NAIRA)} transfer into the permanent virtual account, credited at once.`,
  run: async (run) => [await fund(run, AMOUNT_NAIRA)],
};

const declinedCard: TriggerPlan = {
  does: `A ${shown(AMOUNT_NAIRA)} card deposit with the sandbox's declined card (${SANDBOX_PAYMENTS.cards.declined}); the card is not stored.`,
  run: async ({ services, principal, keyOf, now }) => [
    caused(
      await services.deposits.simulateCardDeposit(
        principal,
        { amount: AMOUNT_NAIRA, narration: NARRATION },
        { number: SANDBOX_PAYMENTS.cards.declined, cvv: '123', expMonth: 12, expYear: now.getUTCFullYear() + 3 },
        keyOf('card'),
      ),
    ),
  ],
};

const KNOWN_ACCOUNT = SANDBOX_PAYMENTS.knownAccount;

/** A payout of ₦1,000 to `accountNumber`, after funding it and its fee. */
const payoutTo = (accountNumber: string, outcome: string): TriggerPlan => ({
  does: `A ${shown(AMOUNT_NAIRA + PAYOUT_FEE_NAIRA)} transfer into the virtual account, then a ${shown(AMOUNT_NAIRA)} payout to bank ${KNOWN_ACCOUNT.bankCode}, account ${accountNumber}: ${outcome}.`,
  run: async (run) => {
    const funded = await fund(run, AMOUNT_NAIRA + PAYOUT_FEE_NAIRA);
    const payout = await run.services.payouts.withdraw(
      run.principal,
      { amount: AMOUNT_NAIRA, bankCode: KNOWN_ACCOUNT.bankCode, accountNumber, narration: NARRATION },
      run.keyOf('payout'),
    );
    return [funded, caused(payout)];
  },
});

/** A ₦100 MTN airtime payment to `customer`, after funding it. */
const airtimeFor = (customer: string, outcome: string): TriggerPlan => ({
  does: `A ${shown(BILL_NAIRA)} transfer into the virtual account, then ${shown(BILL_NAIRA)} of MTN airtime for ${customer}: ${outcome}.`,
  run: async (run) => {
    const funded = await fund(run, BILL_NAIRA);
    const bill = await run.services.bills.pay(
      run.principal,
      { type: 'AIRTIME', biller: 'MTN', customer, amount: BILL_NAIRA },
      run.keyOf('bill'),
    );
    return [funded, caused(bill)];
  },
});

/** The sandbox order's statuses in the order it takes them; `refunded` ends a failing payout's. */
const WALK: readonly OfframpStatus[] = ['initiated', 'deposit_received', 'processing', 'fiat_sent', 'completed'];
const OFFRAMP_ACCOUNT = '0123456789';

/**
 * A 10 USDC (Base) order paying out NGN to `accountNumber`, walked to `target`: the deposit
 * arrives as `POST …/sandbox/orders/{reference}/deposit` makes it, then the sandbox lifecycle's
 * own steps are taken at once rather than 5 s apart. The order's step jobs then carry it on.
 */
const offrampTo = (target: OfframpStatus, accountNumber: string, outcome: string): TriggerPlan => ({
  does: [
    `A 10 USDC (Base) offramp order to NGN, account ${accountNumber}`,
    target === 'initiated' ? '' : ', its deposit simulated',
    // Beyond the deposit, the steps the order's jobs would take 5 s apart.
    target === 'initiated' || target === 'deposit_received' ? '' : ', and the sandbox lifecycle stepped at once',
    `: ${outcome}.`,
  ].join(''),
  run: async ({ services, principal, keyOf }) => {
    // Under a key, the reference comes from it, so a retry finds the same order.
    const reference = `trg-${keyOf('offramp')?.slice(-32) ?? randomUUID()}`;
    const order = await services.offramp.initiate(
      principal,
      {
        token: 'USDC',
        network: 'base',
        amount: '10',
        fiat: 'NGN',
        reference,
        recipient: { institution: 'GTBINGLA', accountNumber, accountName: 'Sandbox Recipient', memo: NARRATION },
      },
      keyOf('offramp'),
    );
    if (target !== 'initiated') await services.offramp.simulateDeposit(principal, reference, keyOf('offramp-deposit'));
    const goal = target === 'refunded' ? Number.POSITIVE_INFINITY : WALK.indexOf(target);
    for (;;) {
      const row = await services.offramp.findOrder(order.id);
      if (!row || isFinal(row.status) || WALK.indexOf(row.status) >= goal) break;
      const next = nextSandboxStep(row);
      if (!next) break;
      await services.offramp.move(row.id, next);
    }
    return [caused(order)];
  },
});

const payoutCompletes = payoutTo(KNOWN_ACCOUNT.accountNumber, 'initiated, then completed');

/** Each kind's cause. Kinds one operation emits together share its plan. */
export const TRIGGER_PLANS: Record<TriggerableKind, TriggerPlan> = {
  'deposit.initiated': bankTransferDeposit,
  'deposit.pending': bankTransferDeposit,
  'deposit.completed': virtualAccountTransfer,
  'deposit.failed': declinedCard,
  'payout.initiated': payoutCompletes,
  'payout.processing': payoutTo(
    SANDBOX_PAYMENTS.payouts.timeoutAccount,
    'the provider times out, so it stays processing until reconciliation completes it',
  ),
  'payout.completed': payoutCompletes,
  'payout.failed': payoutTo(SANDBOX_PAYMENTS.payouts.failingAccount, 'the bank refuses it and the hold is released'),
  'offramp.initiated': offrampTo(
    'initiated',
    OFFRAMP_ACCOUNT,
    `it waits for its deposit, and expires after ${SANDBOX_OFFRAMP.validityMinutes} minutes`,
  ),
  'offramp.deposit_received': offrampTo(
    'deposit_received',
    OFFRAMP_ACCOUNT,
    `processing, fiat_sent and completed follow ${SANDBOX_STEP_SECONDS} s apart`,
  ),
  'offramp.processing': offrampTo(
    'processing',
    OFFRAMP_ACCOUNT,
    `fiat_sent and completed follow ${SANDBOX_STEP_SECONDS} s apart`,
  ),
  'offramp.fiat_sent': offrampTo('fiat_sent', OFFRAMP_ACCOUNT, `completed follows ${SANDBOX_STEP_SECONDS} s later`),
  'offramp.completed': offrampTo('completed', OFFRAMP_ACCOUNT, 'processing, fiat_sent, completed'),
  'offramp.failed': offrampTo(
    'refunded',
    SANDBOX_OFFRAMP.failingPayoutAccount,
    'the payout fails after the deposit and the order ends refunded',
  ),
  'transaction.created': bankTransferDeposit,
  'transaction.updated': bankTransferDeposit,
  'transaction.completed': virtualAccountTransfer,
  'transaction.failed': declinedCard,
  'bill.payment.successful': airtimeFor('08031234567', 'SUCCESS'),
  'bill.payment.failed': airtimeFor(SANDBOX_BILLS.failingCustomer, 'the biller declines it and the wallet is refunded'),
};

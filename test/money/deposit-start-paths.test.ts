import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { testClocks } from '../../src/db/sandbox-schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { ManualClock } from '../../src/domain/clock.js';
import type { KeyRef } from '../../src/domain/money/key-claim.js';
import type { ChargeState, PayInAccount, PaymentsProvider } from '../../src/domain/payments/payments-provider.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import type { DepositRow } from '../../src/domain/wallet/deposit-store.js';
import { seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';

const HOUR_MS = 3_600_000;

/** The deposit service's second commit (its private `started`), as the start of every deposit calls it. */
type Started = (
  provider: PaymentsProvider,
  deposit: DepositRow,
  state: ChargeState,
  payIn: PayInAccount | undefined,
  key: KeyRef | null,
) => Promise<DepositRow>;

/**
 * A deposit's start, initiated → pending (the provider answered "pending": an account to pay into,
 * a code to dial, a link, a PIN to send), has two forms: ONE statement (deposit-writes.ts
 * `startDeposit`, the request path) and the steps the service runs when the statement writes
 * nothing (the state table's `transition`, the wallet transaction's progress, the expiry and
 * simulated-arrival jobs, the key's answer, each its own statement). For every method whose start
 * is this move, on the process clock and on a sandbox test clock, this opens two deposits the same
 * way, starts one each way with the same provider answer at the same time, and compares every row
 * written: the deposit, the move kept, the wallet transaction, the events in order, the jobs and
 * the key's answer, with the ids that differ between the two named, not compared.
 */
describe('a deposit’s start written as one statement and as steps', () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({
      clock,
      // Its own database on PGlite too: the sandbox-arrival and reconcile jobs it leaves are due at
      // any clock, and would compete with other files' runs of those kinds in a shared one.
      isolated: 'even-on-pglite',
      config: { RATE_LIMIT_PER_MINUTE: 100_000 },
    });
  });
  afterAll(() => s.t.close());

  const service = () => s.t.services.deposits as unknown as { started: Started };

  /** What the provider answers a start with, the same both ways but for its reference (unique per provider). */
  interface Answer {
    state: ChargeState;
    payIn?: PayInAccount;
  }

  interface Case {
    name: string;
    /** Opens the deposit under the key `start-paths` through the service's own path. */
    open: (principal: Principal) => Promise<unknown>;
    answer: (providerRef: string) => Answer;
    /** The jobs the start queues, besides the open's `deposit.reconcile`. */
    jobs: string[];
  }

  const reference = 'START-PATHS-1';
  const key = 'start-paths';
  const cases: Case[] = [
    {
      name: 'bank transfer (an account to pay into)',
      open: (principal) => s.t.services.deposits.bankTransfer(principal, { amount: 5000, reference }, key),
      answer: (providerRef) => ({
        state: { providerRef, status: 'pending' },
        payIn: {
          providerRef,
          accountNumber: '9912345678',
          bankName: 'Sandbox Bank',
          accountName: `PGW/${reference}`,
          // The provider's expiry, on the process clock.
          expiresAt: new Date(clock.now().getTime() + SANDBOX_PAYMENTS.transferAccountMinutes * 60_000),
          note: 'Transfer exactly NGN 5000.00 to this account before it expires.',
        },
      }),
      jobs: ['deposit.expire', 'deposit.sandbox-arrival'],
    },
    {
      name: 'bank transfer, the provider not answering (a fault)',
      open: (principal) =>
        s.t.services.deposits.bankTransfer(principal, { amount: 5000, reference, narration: 'rent' }, key),
      answer: () => ({ state: { providerRef: '', status: 'pending' } }),
      jobs: ['deposit.sandbox-arrival'],
    },
    {
      name: 'USSD (a code to dial)',
      open: (principal) => s.t.services.deposits.ussd(principal, { amount: 2500, reference, bankCode: '044' }, key),
      answer: (providerRef) => ({
        state: {
          providerRef,
          status: 'pending',
          nextAction: { type: 'payment_instruction', payment_instruction: { note: 'Dial *737*000*1234# to pay.' } },
        },
      }),
      jobs: ['deposit.sandbox-arrival'],
    },
    {
      name: 'payment link (a page to pay on)',
      open: (principal) =>
        s.t.services.deposits.paymentLink(
          principal,
          { amount: 1200, reference, redirectUrl: 'https://merchant.example.test/back', meta: { order: 7 } },
          key,
        ),
      answer: (providerRef) => ({
        state: {
          providerRef,
          status: 'pending',
          nextAction: {
            type: 'redirect_url',
            redirect_url: { url: `https://sandbox-checkout.partner-gateway.test/pay/${reference}` },
          },
        },
      }),
      jobs: ['deposit.expire', 'deposit.sandbox-arrival'],
    },
    {
      name: 'card awaiting its PIN',
      open: (principal) =>
        s.t.services.deposits.simulateCardDeposit(
          principal,
          { amount: 800, reference },
          { number: SANDBOX_PAYMENTS.cards.pinThenOtp, cvv: '564', expMonth: 9, expYear: 2031 },
          key,
        ),
      answer: (providerRef) => ({
        state: { providerRef, status: 'pending', nextAction: { type: 'requires_pin', requires_pin: {} } },
      }),
      jobs: [],
    },
    {
      name: 'card awaiting 3D Secure',
      open: (principal) =>
        s.t.services.deposits.simulateCardDeposit(
          principal,
          { amount: 800, reference, redirectUrl: 'https://merchant.example.test/back' },
          { number: SANDBOX_PAYMENTS.cards.threeDs, cvv: '564', expMonth: 9, expYear: 2031 },
          key,
        ),
      answer: (providerRef) => ({
        state: {
          providerRef,
          status: 'pending',
          nextAction: {
            type: 'redirect_url',
            redirect_url: { url: `https://sandbox-3ds.partner-gateway.test/authorize/${providerRef}` },
          },
        },
      }),
      jobs: [],
    },
  ];

  interface Opened {
    deposit: DepositRow;
    key: KeyRef | null;
    provider: PaymentsProvider;
    email: string;
    clockId: string | null;
    providerRef: string;
  }

  /**
   * A fresh tenant's deposit after its first commit only: the service's own open (key claimed,
   * record, wallet transaction, events, reconcile job), its second commit held back and its
   * arguments kept. The sandbox's answer to the charge is set aside: the test gives the provider's
   * answer itself, the same both ways (the sandbox's has random parts).
   */
  async function openDeposit(c: Case, onTestClock: boolean): Promise<Opened> {
    const tenant = await seedTenant(s.t.services);
    const principal: Principal = {
      kind: 'api_key',
      credentialId: 'deposit-start-paths',
      userId: tenant.user.id,
      environment: 'sandbox',
      abilities: new Set(['READ', 'TRANSACT']),
    };
    let clockId: string | null = null;
    if (onTestClock) {
      // The account on a test clock two hours ahead: the statement's clocked form, its jobs in wall time.
      const [row] = await s.t.services.db
        .insert(testClocks)
        .values({
          userId: tenant.user.id,
          environment: 'sandbox',
          name: 'start-paths',
          offsetMs: 2 * HOUR_MS,
          attachedAt: clock.now(),
        })
        .returning();
      s.t.services.testClocks.changed(row!);
      clockId = row!.id;
    }
    const held: Array<Parameters<Started>> = [];
    const deposits = service();
    deposits.started = async (...args) => {
      held.push(args);
      return args[1];
    };
    try {
      await c.open(principal);
    } finally {
      delete (deposits as Partial<typeof deposits>).started;
    }
    expect(held).toHaveLength(1);
    const [provider, deposit, , , ref] = held[0]!;
    expect(deposit.status).toBe('initiated');
    expect(ref).not.toBeNull();
    return { deposit, key: ref, provider, email: tenant.user.email, clockId, providerRef: `sbx_${randomUUID()}` };
  }

  /** Every row the start wrote (and the open's, the same either way), the ids that differ named. */
  async function footprint(o: Opened, moved: DepositRow) {
    const db = s.t.services.db;
    const { id, userId, transactionId } = o.deposit;
    // Columns the database fills itself (ids, its own clock, the relay's stamps) are not compared.
    const rows = {
      returned: [moved],
      deposit: await queryRows(db, sql`select * from deposits where id = ${id}`),
      moves: await queryRows(
        db,
        sql`select kind, operation_id, from_status, to_status, at from operation_transitions
            where operation_id in (${id}, ${transactionId}) order by id`,
      ),
      transaction: await queryRows(db, sql`select * from wallet_transactions where id = ${transactionId}`),
      events: await queryRows(
        db,
        sql`select type, user_id, environment, data, created_at, trace_context, source_id from events
            where user_id = ${userId} order by ordinal`,
      ),
      jobs: await queryRows(
        db,
        sql`select kind, lane, tenant, concurrency_key, payload, status, run_at, attempts, event_seq, test_clock_id,
              locked_by, locked_until, last_error
            from jobs where payload->>'depositId' = ${id} order by kind`,
      ),
      key: await queryRows(
        db,
        sql`select user_id, environment, operation, key, request_hash, status, resource_id, response, locked_until
            from idempotency_keys where user_id = ${userId} and key = ${key}`,
      ),
    };
    let text = JSON.stringify(rows, (_, value) => (typeof value === 'bigint' ? `${value}n` : value));
    for (const [value, name] of [
      [id, '<deposit>'],
      [transactionId!, '<transaction>'],
      [userId, '<user>'],
      [o.email, '<email>'],
      [o.providerRef, '<provider-ref>'],
      ...(o.clockId ? [[o.clockId, '<test-clock>'] as const] : []),
    ] as const)
      text = text.replaceAll(value, name);
    return JSON.parse(text);
  }

  for (const onTestClock of [false, true])
    for (const c of cases)
      it(`${c.name}${onTestClock ? ', on a test clock' : ''}: the same rows either way`, async () => {
        const steps = await openDeposit(c, onTestClock);
        const statement = await openDeposit(c, onTestClock);
        // Started a minute after the open, so the start's own times and versions are told apart.
        clock.advance(60_000);
        const started = Object.getPrototypeOf(service()).started as Started;
        const start = (o: Opened, deposit: DepositRow) => {
          const { state, payIn } = c.answer(o.providerRef);
          return started.call(service(), o.provider, deposit, state, payIn, o.key);
        };
        // The steps run when the statement writes nothing (the deposit moved meanwhile, told by its
        // version): given the deposit at a version it no longer has, the statement declines, and the
        // steps move the row as it stands.
        const bySteps = await start(steps, { ...steps.deposit, version: steps.deposit.version + 1 });
        const byStatement = await start(statement, statement.deposit);
        expect([bySteps.status, byStatement.status]).toEqual(['pending', 'pending']);

        const written = await footprint(steps, bySteps);
        expect(written.deposit).toEqual([expect.objectContaining({ status: 'pending', version: 2 })]);
        expect(written.moves).toEqual([expect.objectContaining({ from_status: 'initiated', to_status: 'pending' })]);
        expect(written.transaction).toEqual([expect.objectContaining({ status: 'PENDING', version: 2 })]);
        expect(written.events.map((e: { type: string }) => e.type)).toEqual([
          'deposit.initiated',
          'transaction.created',
          'deposit.pending',
          'transaction.updated',
        ]);
        expect(written.jobs.map((j: { kind: string }) => j.kind).sort()).toEqual(
          ['deposit.reconcile', ...c.jobs].sort(),
        );
        expect(written.key).toEqual([
          expect.objectContaining({ status: 'done', resource_id: '<deposit>', locked_until: null }),
        ]);
        expect(await footprint(statement, byStatement)).toEqual(written);
      });
});

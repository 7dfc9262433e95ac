/**
 * The exact-writes ceilings of `npm run bench:money`: a plain node:http server on a bare `pg` pool
 * against the gateway's own database (its schema, indexes, tenants and accounts), running the
 * gateway's OWN statements, imported from src/ — so a refactor that changes a statement changes
 * this ceiling too. No framework, GraphQL, REST, authentication, rate limits, metrics or logging:
 * what is left is what PostgreSQL must do for the gateway's writes, and the least client work to
 * send them. Every request carries a fresh Idempotency-Key, as the bench's gateway requests do.
 *
 * - `POST /p2p` `{"from","to"}`: the transfer statement (wallet/transfer-store.ts `writeTransfer`,
 *   one statement; one sender's transfers in flight together coalesce into a batch there, as in
 *   the gateway). `POST /hot` `{"to"}`: the same from the treasury.
 * - `POST /airtime` `{"owner"}`: the bill's open statement, a no-op provider answering SUCCESS as
 *   the sandbox does, the settle statement (bills/bill-writes.ts).
 * - `POST /deposit` `{"owner"}`: a bank-transfer deposit's open statement, a no-op provider giving
 *   a pay-in account, the started statement (wallet/deposit-writes.ts), with the expiry and the
 *   sandbox's arrival jobs the gateway writes.
 * - `POST /payout` `{"owner"}`: the payout service's own withdraw (wallet/payout-service.ts) with a
 *   no-op payments provider: its open is still a transaction of Drizzle statements (key claim,
 *   payout limits' usage row, hold, payout, events, pending transaction, reconcile job), then the
 *   settle statement (money/held-operation.ts, generated from PAYOUT_HELD). Here the client work of building those statements
 *   counts in this process, as it does in the gateway.
 *
 * Reads the gateway makes on the way that are not part of a write (a transfer's recipient, a
 * depositor's name) are made once at start here: their cost counts against the gateway. (The
 * payout service makes its own reads here, as in the gateway.) `GET /stats`: round trips and
 * writing commits since the last call (statement-counter.ts, stats-flush.ts). Tenants come as the
 * first argument (`{"tenants":[{"id","keyId"}],"treasury":{…}}`). Prints
 * `{"ready":true,"pid":…,"port":…}`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import * as schema from '../../src/db/schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { KeyControlsService } from '../../src/domain/auth/key-controls.js';
import { BillCatalogue } from '../../src/domain/bills/bill-catalogue.js';
import { BILL_HELD } from '../../src/domain/bills/bill-lifecycle.js';
import { billTransaction, pendingBillRow } from '../../src/domain/bills/bill-rows.js';
import { openBill } from '../../src/domain/bills/bill-writes.js';
import { SandboxBillsProvider } from '../../src/domain/bills/sandbox-bills-provider.js';
import { systemClock } from '../../src/domain/clock.js';
import { Idempotency, toStorable } from '../../src/domain/idempotency/idempotency.js';
import { holdsOf, ledger, walletOf } from '../../src/domain/ledger/ledger.js';
import { settleInOneStatement } from '../../src/domain/money/held-operation.js';
import { heldAccounts } from '../../src/domain/money/settle-held.js';
import { HELD_WALLET } from '../../src/domain/wallet/held-wallet.js';
import type { PaymentsProvider } from '../../src/domain/payments/payments-provider.js';
import { PayoutControls, payoutLimitDefaultsOf } from '../../src/domain/payouts/payout-limits.js';
import { depositTransaction, initiatedDeposit } from '../../src/domain/wallet/deposit-rows.js';
import { openDeposit, startDeposit, startsInOneStatement } from '../../src/domain/wallet/deposit-writes.js';
import { PayoutService } from '../../src/domain/wallet/payout-service.js';
import { pendingTransactionRow } from '../../src/domain/wallet/wallet-events.js';
import { TRANSFER_OPERATION, writeTransfer } from '../../src/domain/wallet/transfer-store.js';
import { countPgStatements } from './statement-counter.js';
import { servePeer } from './peer-server.js';

const ENVIRONMENT = 'sandbox' as const;
/** ₦1 per transfer and ₦100 per bill, deposit and payout, as the bench's gateway requests send. */
const TRANSFER_KOBO = 100n;
const PATH_KOBO = 10_000n;
/** What the gateway's sandbox provider does that the no-op provider must match to write the same rows. */
const PAY_IN_MINUTES = 30;
const SANDBOX_ARRIVAL_MS = 60_000;
/** As the services hold a key across a provider call, and first poll a bill. */
const PROVIDER_CALL_LEASE_MS = 60_000;
const POLL_AFTER_MS = 2 * 60_000;

interface Tenant {
  id: string;
  keyId: string;
}
const { tenants, treasury } = JSON.parse(process.argv[2]!) as { tenants: Tenant[]; treasury: Tenant };
const everyone = [...tenants, treasury];

const config = loadConfig(process.env, { SEED_DEMO: false, WORKERS: false });
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL!, max: 20 });
const db = drizzle(pool, { schema }) as unknown as Database;
const idempotency = new Idempotency(db, systemClock, randomBytes(32));

// Every account the paths touch, resolved (and cached by the ledger) before the first request.
const wallet = new Map<string, string>();
for (const t of everyone) {
  wallet.set(t.id, await ledger.cachedAccountId(db, walletOf(ENVIRONMENT, t.id)));
  // Looked up again by the opens themselves, from the ledger's cache.
  await ledger.cachedAccountId(db, holdsOf(ENVIRONMENT, t.id));
}
// The settles' system accounts: one shard of each at random per call, so enough calls meet them all.
for (let i = 0; i < 200; i++) await heldAccounts(db, ENVIRONMENT, treasury.id);
const users = new Map(
  (
    await pool.query<{
      id: string;
      email: string;
      first_name: string | null;
      last_name: string | null;
      phone: string | null;
    }>('select id, email, first_name, last_name, phone from users where id = any($1::uuid[])', [
      everyone.map((t) => t.id),
    ])
  ).rows.map((u) => [u.id, u]),
);
const principalOf = (t: Tenant): Principal => ({
  kind: 'api_key',
  credentialId: t.keyId,
  userId: t.id,
  environment: ENVIRONMENT,
  abilities: new Set(),
});
const principals = new Map(everyone.map((t) => [t.id, principalOf(t)]));

// The airtime the bench's gateway requests buy, resolved once by the gateway's own catalogue.
const bills = new SandboxBillsProvider();
const payment = await new BillCatalogue(() => bills).resolvePayment(principalOf(treasury), {
  type: 'AIRTIME',
  biller: 'mtn',
  customer: '08031234567',
  amount: Number(PATH_KOBO) / 100,
});

/** The no-op payments provider: answers at once, as the sandbox would, and does nothing. */
const noopPayments = {
  name: 'sandbox',
  banks: async () => [{ code: '044', name: 'Access Bank' }],
  resolveAccount: async ({ accountNumber }: { accountNumber: string }) => `SANDBOX ACCOUNT ${accountNumber.slice(-4)}`,
  transfer: async () => ({ providerRef: `sbx_tr_${randomBytes(8).toString('hex')}`, status: 'succeeded' as const }),
} as unknown as PaymentsProvider;
const payouts = new PayoutService(
  db,
  systemClock,
  idempotency,
  () => noopPayments,
  {
    periodMs: config.PAYOUT_COOLING_OFF_MINUTES * 60_000,
    capKobo: BigInt(config.PAYOUT_COOLING_OFF_CAP_KOBO),
    sandbox: config.PAYOUT_COOLING_OFF_SANDBOX,
  },
  new PayoutControls(new KeyControlsService(db, systemClock), payoutLimitDefaultsOf(config)),
);

async function transfer(from: string, to: string): Promise<void> {
  const recipient = users.get(to)!;
  const reference = `TRF-${randomUUID()}`;
  const key = idempotency.keyRef(
    { userId: from, environment: ENVIRONMENT, operation: TRANSFER_OPERATION },
    randomUUID(),
    { amount: TRANSFER_KOBO, reference: null, recipient: to, narration: null },
  )!;
  const outcome = await writeTransfer(
    db,
    {
      environment: ENVIRONMENT,
      senderId: from,
      recipient: { id: recipient.id, email: recipient.email },
      senderAccountId: wallet.get(from)!,
      recipientAccountId: wallet.get(to)!,
      amount: TRANSFER_KOBO,
      reference,
      narration: null,
      at: new Date(),
      key: { key: key.key, requestHash: key.requestHash },
    },
    (row) => ({ result: toStorable(row) }),
  );
  if (!('done' in outcome)) throw new Error(`transfer not written: ${JSON.stringify(outcome)}`);
}

async function airtime(owner: string): Promise<void> {
  const now = new Date();
  const reference = `BILL-${randomUUID()}`;
  const key = idempotency.keyRef({ userId: owner, environment: ENVIRONMENT, operation: 'bills.pay' }, randomUUID(), {
    payment,
    reference: null,
  })!;
  const payer = { userId: owner, environment: ENVIRONMENT };
  const pending = pendingBillRow(payer, payment, reference, bills.name, now, { holdId: randomUUID() });
  const opened = await openBill(db, {
    owner: payer,
    record: pending,
    transaction: pendingTransactionRow(payer, billTransaction(pending, randomUUID()), now),
    pollAt: new Date(now.getTime() + POLL_AFTER_MS),
    leaseUntil: new Date(now.getTime() + PROVIDER_CALL_LEASE_MS),
    key,
  });
  if (!('opened' in opened)) throw new Error(`bill not opened: ${JSON.stringify(opened)}`);
  const record = opened.opened;
  // The no-op biller: SUCCESS at once, with the answer the sandbox gives for airtime.
  const txRef = `SBX-FLYAPI-${randomBytes(6).toString('hex').toUpperCase()}`;
  const outcome = {
    status: 'SUCCESS' as const,
    txRef,
    token: null,
    units: null,
    providerData: {
      billerCode: record.billerCode,
      itemCode: record.itemCode,
      customer: record.customer,
      amount: Number(record.amount) / 100,
      reference: `pgw-${record.id}`,
      txRef,
    },
  };
  // Undefined when the change is no longer one statement, or nothing was written.
  const settled = await settleInOneStatement(db, BILL_HELD, HELD_WALLET, record, outcome, {
    at: new Date(),
    accounts: await heldAccounts(db, ENVIRONMENT, owner),
    key,
  });
  if (!settled) throw new Error('bill not settled in one statement');
}

async function deposit(owner: string): Promise<void> {
  const now = new Date();
  const user = users.get(owner)!;
  const customer = {
    email: user.email,
    name: [user.first_name, user.last_name].filter(Boolean).join(' ') || user.email,
    phoneNumber: user.phone ?? '',
  };
  const input = { method: 'bank_transfer', amount: PATH_KOBO, currency: 'NGN', reference: null };
  const key =
    idempotency.keyRef({ userId: owner, environment: ENVIRONMENT, operation: 'wallet.deposit' }, randomUUID(), {
      ...input,
      narration: null,
      redirectUrl: null,
      meta: null,
    }) ?? null;
  const reference = `DEP-${randomUUID()}`;
  const pending = initiatedDeposit(
    {
      id: randomUUID(),
      userId: owner,
      environment: ENVIRONMENT,
      reference,
      method: 'bank_transfer',
      paymentMethodId: null,
      amount: PATH_KOBO,
      currency: 'NGN',
      provider: noopPayments.name,
      redirectUrl: null,
      narration: null,
      meta: null,
      customer,
    },
    randomUUID(),
    now,
  );
  const opened = await openDeposit(db, {
    deposit: pending,
    transaction: pendingTransactionRow(pending, depositTransaction(pending), pending.createdAt),
    reconcileAt: null,
    leaseUntil: new Date(now.getTime() + PROVIDER_CALL_LEASE_MS),
    key,
  });
  if (!('opened' in opened)) throw new Error(`deposit not opened: ${JSON.stringify(opened)}`);
  const row = opened.opened;
  if (!startsInOneStatement(row)) throw new Error('the deposit start is no longer one statement');
  // The no-op provider's pay-in account, shaped as the sandbox's.
  const at = new Date();
  const expiresAt = new Date(at.getTime() + PAY_IN_MINUTES * 60_000);
  const note = `Transfer exactly NGN ${(Number(row.amount) / 100).toFixed(2)} to this account before it expires.`;
  const nextAction = { type: 'payment_instruction' as const, payment_instruction: { note } };
  const moved = await startDeposit(db, {
    deposit: row,
    changes: {
      providerRef: `sbx_bt_${randomBytes(8).toString('hex')}`,
      accountNumber: `99${String(randomBytes(4).readUInt32BE(0) % 1e8).padStart(8, '0')}`,
      bankName: 'Sandbox Bank',
      accountName: `PGW/pgw-${row.id}`,
      expiresAt,
      narration: row.narration ?? note,
      nextAction,
    },
    stage: nextAction.type,
    at,
    expireAt: expiresAt,
    arrivalAt: new Date(at.getTime() + SANDBOX_ARRIVAL_MS),
    key,
  });
  if (!moved) throw new Error('deposit not started');
}

async function payout(owner: string): Promise<void> {
  const row = await payouts.withdraw(
    principals.get(owner)!,
    { amount: Number(PATH_KOBO) / 100, bankCode: '044', accountNumber: '0690000040' },
    randomUUID(),
  );
  if (row.status !== 'completed') throw new Error(`payout ${row.status}`);
}

const counter = countPgStatements();
const routes: Record<string, (body: Record<string, string>) => Promise<void>> = {
  '/p2p': (b) => transfer(b['from']!, b['to']!),
  '/hot': (b) => transfer(treasury.id, b['to']!),
  '/airtime': (b) => airtime(b['owner']!),
  '/deposit': (b) => deposit(b['owner']!),
  '/payout': (b) => payout(b['owner']!),
};

await servePeer(pool, counter, (path, body) => routes[path]?.(body));

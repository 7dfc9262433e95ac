import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import type { Services } from '../../src/services.js';
import type { Tenant } from '../helpers/app.js';
import { keyedPost } from './credit-faults.js';
import type { Transfer } from './fault-harness.js';

/** A payout of ₦1 holds ₦1 and the ₦25 fee, and captures both. */
export const PAYOUT_DEBIT_KOBO = 2_600n;

/** Flutterwave's documented test account: paid at once by the sandbox. */
export const PAID_AT_ONCE = SANDBOX_PAYMENTS.knownAccount.accountNumber;
/** The sandbox's provider takes 3 s over a payout to it: a window between the payout's two commits. */
export const PAID_SLOWLY = SANDBOX_PAYMENTS.payouts.slowAccount;

/** A keyed answer with when it was sent and answered (the process clock, as the gateway's). */
export type TimedTransfer = Transfer & { sentAt: number; answeredAt: number };

/** One payout of ₦1 to `accountNumber` at bank 044, `key` its Idempotency-Key and reference. */
export async function payout(url: string, tenant: Tenant, key: string, accountNumber: string): Promise<TimedTransfer> {
  const sentAt = Date.now();
  const answer = await keyedPost(
    url,
    tenant.keys.TRANSACTIONS,
    '/api/v1/wallet/withdraw',
    { amount: 1, bankCode: SANDBOX_PAYMENTS.knownAccount.bankCode, accountNumber, reference: key },
    key,
  );
  return { ...answer, sentAt, answeredAt: Date.now() };
}

export interface KeyRow {
  key: string;
  status: string;
  lockedUntil: number | null;
}

/** The tenant's Idempotency-Keys among `keys`, as they stand. */
export async function keyRows(services: Services, tenant: Tenant, keys: string[]): Promise<KeyRow[]> {
  const rows = await queryRows<{ key: string; status: string; locked_until: Date | string | null }>(
    services.db,
    sql`select key, status::text as status, locked_until from idempotency_keys
        where user_id = ${tenant.user.id}
          and key in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))`,
  );
  return rows.map((r) => ({
    key: r.key,
    status: r.status,
    lockedUntil: r.locked_until === null ? null : new Date(r.locked_until).getTime(),
  }));
}

/** The tenant's payouts by reference: status and how many there are of each. */
export async function payoutsOf(services: Services, tenant: Tenant) {
  return queryRows<{ reference: string; status: string; n: number }>(
    services.db,
    sql`select reference, min(status::text) as status, count(*)::int as n from payouts
        where user_id = ${tenant.user.id} group by reference`,
  );
}

/**
 * What payouts of ₦1 must be once every request has been answered 2xx: each answer completed, one
 * completed payout per key, the wallet debited by exactly those, nothing held, no key running, the
 * ledger summing to zero.
 */
export async function expectPaidOnce(
  services: Services,
  tenant: Tenant,
  answered: Transfer[],
  keys: string[],
  funded: bigint,
): Promise<void> {
  expect(answered.map((t) => t.reference).sort()).toEqual([...keys].sort());
  expect(answered.filter((t) => t.data?.['status'] !== 'completed').map((t) => [t.reference, t.data])).toEqual([]);
  const payouts = await payoutsOf(services, tenant);
  expect(payouts.filter((p) => p.n !== 1 || p.status !== 'completed')).toEqual([]);
  expect(payouts.map((p) => p.reference).sort()).toEqual([...keys].sort());
  expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({
    available: funded - PAYOUT_DEBIT_KOBO * BigInt(keys.length),
    held: 0n,
  });
  expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
  const [stuck] = await queryRows<{ keys: number; holds: number }>(
    services.db,
    sql`select (select count(*)::int from idempotency_keys where user_id = ${tenant.user.id} and status = 'running') as keys,
               (select count(*)::int from ledger_holds where user_id = ${tenant.user.id} and status = 'held') as holds`,
  );
  expect(stuck).toEqual({ keys: 0, holds: 0 });
}

/** A sandbox airtime purchase of ₦50 (the least the biller takes), `key` its Idempotency-Key and reference. */
export function airtime(url: string, tenant: Tenant, key: string): Promise<Transfer> {
  return keyedPost(
    url,
    tenant.keys.TRANSACTIONS,
    '/api/v1/bills/buy-airtime',
    { phoneNumber: '08031234567', biller: 'MTN', amount: 50, reference: key },
    key,
  );
}

/**
 * What airtime purchases must be once every request has been answered 2xx: each answer SUCCESS,
 * one successful bill of ₦50 per key, the wallet debited by exactly those (face value and fee),
 * nothing held, no key running, the ledger summing to zero.
 */
export async function expectBillsPaidOnce(
  services: Services,
  tenant: Tenant,
  answered: Transfer[],
  keys: string[],
  funded: bigint,
): Promise<void> {
  expect(answered.map((t) => t.reference).sort()).toEqual([...keys].sort());
  expect(answered.filter((t) => t.data?.['status'] !== 'SUCCESS').map((t) => [t.reference, t.data])).toEqual([]);
  const bills = await queryRows<{ reference: string; status: string; n: number; amount: string; debit: string }>(
    services.db,
    sql`select reference, min(status::text) as status, count(*)::int as n, min(amount)::text as amount,
          sum(amount + fee)::text as debit
        from bill_records where user_id = ${tenant.user.id} group by reference`,
  );
  expect(bills.filter((b) => b.n !== 1 || b.status !== 'SUCCESS' || b.amount !== '5000')).toEqual([]);
  expect(bills.map((b) => b.reference).sort()).toEqual([...keys].sort());
  const debited = bills.reduce((sum, b) => sum + BigInt(b.debit), 0n);
  expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({
    available: funded - debited,
    held: 0n,
  });
  expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
  const [stuck] = await queryRows<{ keys: number; holds: number }>(
    services.db,
    sql`select (select count(*)::int from idempotency_keys where user_id = ${tenant.user.id} and status = 'running') as keys,
               (select count(*)::int from ledger_holds where user_id = ${tenant.user.id} and status = 'held') as holds`,
  );
  expect(stuck).toEqual({ keys: 0, holds: 0 });
}

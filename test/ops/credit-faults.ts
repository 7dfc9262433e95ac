import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import type { Services } from '../../src/services.js';
import type { Tenant } from '../helpers/app.js';
import { type BurstOptions, burstOf, retryUntilLanded, succeeded, tally, type Transfer } from './fault-harness.js';
import { onlyRetryable503 } from './faults-scenario.js';
import { waitUntil } from '../helpers/wait.js';

/** ₦1 per credit. */
const CREDIT_KOBO = 100n;

/** One keyed POST of `body` to `path` with `apiKey`; keeps the answer's status, Retry-After and data. */
export async function keyedPost(
  url: string,
  apiKey: string,
  path: string,
  body: object,
  key: string,
): Promise<Transfer> {
  try {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const answer = (await response.json().catch(() => ({}))) as { data?: Record<string, unknown> };
    return {
      reference: key,
      outcome: response.status,
      retryAfter: response.headers.get('retry-after'),
      ...(answer.data ? { data: answer.data } : {}),
    };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    return { reference: key, outcome: code === 'ECONNREFUSED' ? 'refused' : 'reset', retryAfter: null };
  }
}

/** One sandbox transfer of ₦1 into the tenant's virtual account, `key` its Idempotency-Key; keeps the answer's data. */
export function credit(url: string, tenant: Tenant, key: string): Promise<Transfer> {
  return keyedPost(
    url,
    tenant.keys.TRANSACTIONS,
    '/api/v1/wallet/sandbox/virtual-account/transfer',
    { amount: 1 },
    key,
  );
}

/** What a fault may do to a burst's requests (default: only 503 with Retry-After, as a database fault may). */
export type CreditFaultOptions = BurstOptions & { failures?: (failed: Transfer[]) => void };

/**
 * A burst of credits into one tenant's virtual account with a fault in its middle, the failed
 * ones retried with their keys until they land; then what an acknowledged credit must be (see
 * `expectCreditedOnce`). Returns the figures to print.
 */
export async function creditsUnderFault(
  services: Services,
  url: () => string,
  tenant: Tenant,
  prefix: string,
  options: CreditFaultOptions,
): Promise<Record<string, unknown>> {
  const send = (key: string) => credit(url(), tenant, key);
  const results = await burstOf(send, prefix, options);
  const failed = results.filter((t) => !succeeded(t));
  (options.failures ?? onlyRetryable503)(failed);
  const retried = await retryUntilLanded(send, failed);
  await expectCreditedOnce(services, tenant, [...results.filter(succeeded), ...retried.landed], options.count);
  return {
    requests: results.length,
    failed: failed.length,
    outcomes: tally(results),
    retriesMs: retried.ms,
    conflicts: retried.conflicts,
  };
}

/**
 * What acknowledged credits of ₦1 each must be once every request has been answered 2xx: every
 * answer (first or retried) says COMPLETED and names its deposit, which is completed with exactly
 * one posting and a COMPLETED wallet transaction; one deposit per key, nothing else pending,
 * initiated or running; the balance is the credits counted and the ledger sums to zero.
 */
export async function expectCreditedOnce(
  services: Services,
  tenant: Tenant,
  answered: Transfer[],
  count: number,
): Promise<void> {
  expect(answered).toHaveLength(count);
  expect(new Set(answered.map((t) => t.reference)).size).toBe(count);
  expect(answered.filter((t) => t.data?.['status'] !== 'COMPLETED').map((t) => [t.reference, t.data])).toEqual([]);

  const deposits = await queryRows<{ reference: string; status: string; postings: number; transaction: string }>(
    services.db,
    sql`select d.reference, d.status::text as status,
          (select count(*)::int from ledger_postings p where p.kind = 'deposit' and p.reference = d.id::text) as postings,
          (select string_agg(w.status::text, ',') from wallet_transactions w
            where w.user_id = d.user_id and w.environment = d.environment and w.reference = d.reference) as transaction
        from deposits d where d.user_id = ${tenant.user.id}`,
  );
  const byReference = new Map(deposits.map((d) => [d.reference, d]));
  const credited = (d: (typeof deposits)[number] | undefined) =>
    d?.status === 'completed' && d.postings === 1 && d.transaction === 'COMPLETED';
  // The answer names its deposit: each one acknowledged is there, completed, credited once.
  const notCredited = answered
    .map((t) => [t.reference, byReference.get(String(t.data?.['reference']))] as const)
    .filter(([, d]) => !credited(d));
  expect(notCredited).toEqual([]);
  expect(deposits.filter((d) => !credited(d))).toEqual([]);
  expect(deposits).toHaveLength(count);
  expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({
    available: CREDIT_KOBO * BigInt(count),
    held: 0n,
  });
  expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
  const [running] = await queryRows<{ n: number }>(
    services.db,
    sql`select count(*)::int as n from idempotency_keys where user_id = ${tenant.user.id} and status = 'running'`,
  );
  expect(running?.n).toBe(0);
}

/** A card the sandbox charges at once (docs/sandbox.md), stored for the tenant through the gateway; its id. */
export async function storedCard(url: string, tenant: Tenant): Promise<string> {
  const response = await fetch(`${url}/api/v1/payment-methods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': tenant.keys.ACCOUNT_MANAGEMENT },
    body: JSON.stringify({
      type: 'card',
      card: {
        number: SANDBOX_PAYMENTS.cards.noAuth,
        expMonth: 9,
        expYear: new Date().getUTCFullYear() + 3,
        cvv: '564',
      },
    }),
  });
  const body = (await response.json()) as { data?: { id?: string } };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.data!.id!;
}

/** One instant card deposit of ₦1 with a stored card, `key` its Idempotency-Key and reference. */
export function cardDeposit(url: string, tenant: Tenant, paymentMethodId: string, key: string): Promise<Transfer> {
  return keyedPost(
    url,
    tenant.keys.TRANSACTIONS,
    '/api/v1/wallet/deposit/payment-method',
    { amount: 1, paymentMethodId, reference: key },
    key,
  );
}

const depositsAt = (services: Services, tenant: Tenant, status: string) =>
  queryRows<{ reference: string }>(
    services.db,
    sql`select reference from deposits where user_id = ${tenant.user.id} and status::text = ${status} order by reference`,
  ).then((rows) => rows.map((r) => r.reference));

/**
 * A burst of instant card deposits (two commits each, the charge between them) with a database
 * fault in its middle. Half of the failed requests are retried with their keys at once; the
 * others are left to `deposit.reconcile` (the gateway's workers run it once the request's lease
 * and 30 s are over): no deposit stays `initiated`, and each one the job finishes was charged,
 * so it is credited. Then those are retried with their keys too (answered with the deposit as
 * the job left it), and every acknowledged deposit must be credited exactly once
 * (`expectCreditedOnce`). Returns the figures to print.
 */
export async function cardDepositsUnderFault(
  services: Services,
  url: () => string,
  tenant: Tenant,
  prefix: string,
  options: CreditFaultOptions,
): Promise<Record<string, unknown>> {
  const paymentMethodId = await storedCard(url(), tenant);
  const send = (key: string) => cardDeposit(url(), tenant, paymentMethodId, key);
  const results = await burstOf(send, prefix, options);
  const failed = results.filter((t) => !succeeded(t));
  (options.failures ?? onlyRetryable503)(failed);
  const now = failed.filter((_, i) => i % 2 === 0);
  const later = failed.filter((_, i) => i % 2 === 1);
  const retried = await retryUntilLanded(send, now);

  // Cut between the charge and its second commit, not retried: only the job can finish these.
  const leftForJob = await depositsAt(services, tenant, 'initiated');
  const jobStarted = Date.now();
  await waitUntil(async () => (await depositsAt(services, tenant, 'initiated')).length === 0, {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  const jobMs = Date.now() - jobStarted;
  const completed = new Set(await depositsAt(services, tenant, 'completed'));
  expect(leftForJob.filter((reference) => !completed.has(reference))).toEqual([]);

  const retriedLater = await retryUntilLanded(send, later);
  await expectCreditedOnce(
    services,
    tenant,
    [...results.filter(succeeded), ...retried.landed, ...retriedLater.landed],
    options.count,
  );
  return {
    requests: results.length,
    failed: failed.length,
    outcomes: tally(results),
    finishedByTheJob: leftForJob.length,
    jobMs,
    retriesMs: retried.ms + retriedLater.ms,
    conflicts: retried.conflicts + retriedLater.conflicts,
  };
}

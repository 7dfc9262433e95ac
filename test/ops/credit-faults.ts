import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ledger } from '../../src/domain/ledger/ledger.js';
import type { Services } from '../../src/services.js';
import type { Tenant } from '../helpers/app.js';
import { type BurstOptions, burstOf, retryUntilLanded, succeeded, tally, type Transfer } from './fault-harness.js';
import { onlyRetryable503 } from './faults-scenario.js';

/** ₦1 per credit. */
const CREDIT_KOBO = 100n;

/** One sandbox transfer of ₦1 into the tenant's virtual account, `key` its Idempotency-Key; keeps the answer's data. */
export async function credit(url: string, tenant: Tenant, key: string): Promise<Transfer> {
  try {
    const response = await fetch(`${url}/api/v1/wallet/sandbox/virtual-account/transfer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': tenant.keys.TRANSACTIONS,
        'idempotency-key': key,
      },
      body: JSON.stringify({ amount: 1 }),
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await response.json().catch(() => ({}))) as { data?: Record<string, unknown> };
    return {
      reference: key,
      outcome: response.status,
      retryAfter: response.headers.get('retry-after'),
      ...(body.data ? { data: body.data } : {}),
    };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    return { reference: key, outcome: code === 'ECONNREFUSED' ? 'refused' : 'reset', retryAfter: null };
  }
}

/**
 * A burst of credits into one tenant's virtual account with a database fault in its middle, the
 * failed ones retried with their keys until they land; then what an acknowledged credit must be:
 * every 2xx answer (first or retried) says COMPLETED, its deposit is completed with exactly one
 * posting, one deposit per key, nothing left pending or running, and the balance is the credits
 * counted, the ledger summing to zero. Returns the figures to print.
 */
export async function creditsUnderFault(
  services: Services,
  url: () => string,
  tenant: Tenant,
  prefix: string,
  options: BurstOptions,
): Promise<Record<string, unknown>> {
  const send = (key: string) => credit(url(), tenant, key);
  const results = await burstOf(send, prefix, options);
  const failed = results.filter((t) => !succeeded(t));
  onlyRetryable503(failed);
  const retried = await retryUntilLanded(send, failed);
  const answered = [...results.filter(succeeded), ...retried.landed];
  expect(answered).toHaveLength(options.count);
  expect(answered.filter((t) => t.data?.['status'] !== 'COMPLETED').map((t) => [t.reference, t.data])).toEqual([]);

  const deposits = await queryRows<{ reference: string; status: string; postings: number }>(
    services.db,
    sql`select d.reference, d.status::text as status,
          (select count(*)::int from ledger_postings p where p.kind = 'deposit' and p.reference = d.id::text) as postings
        from deposits d where d.user_id = ${tenant.user.id}`,
  );
  const byReference = new Map(deposits.map((d) => [d.reference, d]));
  // The answer names its deposit: each one acknowledged is there, completed, credited once.
  const notCredited = answered
    .map((t) => byReference.get(String(t.data?.['reference'])))
    .filter((d) => d?.status !== 'completed' || d.postings !== 1);
  expect(notCredited).toEqual([]);
  expect(deposits.filter((d) => d.status !== 'completed' || d.postings !== 1)).toEqual([]);
  expect(deposits).toHaveLength(options.count);
  expect(await ledger.balances(services.db, 'sandbox', tenant.user.id)).toEqual({
    available: CREDIT_KOBO * BigInt(options.count),
    held: 0n,
  });
  expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
  const [running] = await queryRows<{ n: number }>(
    services.db,
    sql`select count(*)::int as n from idempotency_keys where user_id = ${tenant.user.id} and status = 'running'`,
  );
  expect(running?.n).toBe(0);
  return {
    requests: results.length,
    failed: failed.length,
    outcomes: tally(results),
    retriesMs: retried.ms,
    conflicts: retried.conflicts,
  };
}

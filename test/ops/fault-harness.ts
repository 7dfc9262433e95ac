import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import type { Services } from '../../src/services.js';
import type { Tenant } from '../helpers/app.js';
import { type Child, spawnTs } from '../helpers/child.js';

/** A gateway process (workers on) against the given PostgreSQL and Redis. */
export async function startGateway(env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = spawnTs('src/main.ts', [], {
    PORT: '0',
    HOST: '127.0.0.1',
    SEED_DEMO: 'false',
    WORKERS: 'true',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '100000',
    // A dead process's keys are passed on after this (the default is a minute).
    IDEMPOTENCY_LEASE_MS: '3000',
    JOB_LEASE_MS: '3000',
    ...env,
  });
  const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 90_000);
  return { child, url: url! };
}

export type Outcome = number | 'reset' | 'refused';

export interface Transfer {
  reference: string;
  outcome: Outcome;
  retryAfter: string | null;
  /** The answer's `data`, when the sender keeps it (a credit's status). */
  data?: Record<string, unknown>;
}

/** Sends one request of a burst under `reference` (its Idempotency-Key). */
export type Send = (reference: string) => Promise<Transfer>;

/** One wallet transfer of ₦1 with its reference as Idempotency-Key. */
export async function transfer(url: string, payer: Tenant, payee: Tenant, reference: string): Promise<Transfer> {
  try {
    const response = await fetch(`${url}/api/v1/wallet/transfer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': payer.keys.TRANSACTIONS,
        'idempotency-key': reference,
      },
      body: JSON.stringify({ amount: 1, recipient: payee.user.id, reference }),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return { reference, outcome: response.status, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    return { reference, outcome: code === 'ECONNREFUSED' ? 'refused' : 'reset', retryAfter: null };
  }
}

/**
 * `count` transfers, `concurrency` at a time; `fault` starts once `faultAfter` have answered and
 * the burst keeps going while it runs (the burst waits for it to end before it returns).
 */
export function burst(
  url: () => string,
  payer: Tenant,
  payee: Tenant,
  prefix: string,
  options: BurstOptions,
): Promise<Transfer[]> {
  return burstOf((reference) => transfer(url(), payer, payee, reference), prefix, options);
}

export interface BurstOptions {
  count: number;
  concurrency: number;
  faultAfter: number;
  fault: () => Promise<void>;
}

/** `burst` of any request: `send` each of `<prefix>-<n>`. */
export async function burstOf(send: Send, prefix: string, options: BurstOptions): Promise<Transfer[]> {
  const results: Transfer[] = [];
  let next = 0;
  let faultRun: Promise<void> | undefined;
  const worker = async () => {
    while (next < options.count) {
      const i = next++;
      results.push(await send(`${prefix}-${i}`));
      if (results.length >= options.faultAfter && !faultRun) {
        faultRun = options.fault();
        // Awaited below; until then a failure must not count as unhandled.
        faultRun.catch(() => undefined);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  await (faultRun ?? options.fault());
  return results;
}

/** Milliseconds until a transfer succeeds, trying every 50 ms (at most `limitMs`). */
export async function timeUntilServing(url: string, payer: Tenant, payee: Tenant, prefix: string, limitMs = 15_000) {
  const started = Date.now();
  for (let i = 0; Date.now() - started < limitMs; i++) {
    const result = await transfer(url, payer, payee, `${prefix}-probe-${i}`);
    if (result.outcome === 200 || result.outcome === 201) return { ms: Date.now() - started, probes: i + 1 };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the gateway did not serve again within ${limitMs} ms`);
}

export const succeeded = (t: Transfer) => t.outcome === 200 || t.outcome === 201;

/**
 * Sends every failed transfer again with its key until it succeeds (409 while a dead request's
 * key is still leased is waited out). Returns how long that took.
 */
export function retryFailed(url: string, payer: Tenant, payee: Tenant, failed: Transfer[], limitMs = 30_000) {
  return retryUntilLanded((reference) => transfer(url, payer, payee, reference), failed, limitMs).then(
    ({ ms, conflicts }) => ({ ms, conflicts }),
  );
}

/** `retryFailed` of any request; also returns every retry's successful answer. */
export async function retryUntilLanded(send: Send, failed: Transfer[], limitMs = 30_000) {
  const started = Date.now();
  const landed: Transfer[] = [];
  let pending = failed.map((t) => t.reference);
  const conflicts = new Set<string>();
  while (pending.length > 0) {
    if (Date.now() - started > limitMs) throw new Error(`retries still failing after ${limitMs} ms: ${pending.length}`);
    const again: Transfer[] = [];
    // Sixteen at a time, like the burst: a retry storm is not what is being measured.
    for (let i = 0; i < pending.length; i += 16) {
      again.push(...(await Promise.all(pending.slice(i, i + 16).map(send))));
    }
    for (const t of again) if (t.outcome === 409) conflicts.add(t.reference);
    landed.push(...again.filter(succeeded));
    pending = again.filter((t) => !succeeded(t)).map((t) => t.reference);
    if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { ms: Date.now() - started, conflicts: conflicts.size, landed };
}

export async function fund(services: Services, tenant: Tenant, kobo: bigint): Promise<void> {
  await services.db.transaction((tx) =>
    ledger.post(tx, {
      environment: 'sandbox',
      kind: 'test-funding',
      reference: crypto.randomUUID(),
      lines: [
        { account: systemAccount('sandbox', 'provider_clearing'), amount: -kobo },
        { account: walletOf('sandbox', tenant.user.id), amount: kobo },
      ],
    }),
  );
}

/**
 * What every fault must leave: each of `references` (all acknowledged in the end) transferred
 * exactly once, balances that match, a ledger summing to zero, no key or hold left running.
 */
export async function expectExactlyOnce(
  services: Services,
  payer: Tenant,
  payee: Tenant,
  references: string[],
  funded: bigint,
): Promise<void> {
  const rows = await queryRows<{ reference: string; n: number }>(
    services.db,
    sql`select reference, count(*)::int as n from wallet_transactions
        where user_id = ${payer.user.id} and type = 'TRANSFER_OUT' group by reference`,
  );
  const counts = new Map(rows.map((r) => [r.reference, r.n]));
  const missing = references.filter((r) => !counts.has(r));
  const doubled = rows.filter((r) => r.n !== 1);
  expect({ missing, doubled }).toEqual({ missing: [], doubled: [] });
  const moved = 100n * BigInt(rows.length);
  expect(await ledger.balances(services.db, 'sandbox', payer.user.id)).toEqual({ available: funded - moved, held: 0n });
  expect(await ledger.balances(services.db, 'sandbox', payee.user.id)).toEqual({ available: moved, held: 0n });
  expect(await ledger.totalOf(services.db, 'sandbox')).toBe(0n);
  const [stuck] = await queryRows<{ keys: number; holds: number }>(
    services.db,
    sql`select (select count(*)::int from idempotency_keys where user_id = ${payer.user.id} and status = 'running') as keys,
               (select count(*)::int from ledger_holds where user_id = ${payer.user.id} and status = 'held') as holds`,
  );
  expect(stuck).toEqual({ keys: 0, holds: 0 });
}

/** How many of the process's log lines since `from` match `pattern`. */
export function linesMatching(child: Child, from: number, pattern: RegExp): number {
  return child
    .output()
    .slice(from)
    .split('\n')
    .filter((line) => pattern.test(line)).length;
}

/** The failures of a burst, by outcome, for the report. */
export function tally(results: Transfer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const t of results) counts[String(t.outcome)] = (counts[String(t.outcome)] ?? 0) + 1;
  return counts;
}

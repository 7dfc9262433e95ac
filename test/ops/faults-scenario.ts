import { expect } from 'vitest';
import type { Services } from '../../src/services.js';
import { seedTenant, type Tenant } from '../helpers/app.js';
import type { Child } from '../helpers/child.js';
import { burst, expectExactlyOnce, fund, retryFailed, succeeded, tally, type Transfer } from './fault-harness.js';

export interface Pair {
  payer: Tenant;
  payee: Tenant;
}

export interface ScenarioRun extends Pair {
  results: Transfer[];
  failed: Transfer[];
  /** The retries of the failed transfers (zero when the scenario does not retry). */
  retried: { ms: number; conflicts: number };
}

/** One fault done in the middle of a burst of transfers, and what it must leave behind. */
export interface FaultScenario {
  /** The name its figures are printed under. */
  name: string;
  /** The burst's Idempotency-Keys and references are `<prefix>-<n>`. */
  prefix: string;
  count: number;
  concurrency: number;
  faultAfter: number;
  /** Done with the fresh pair before the burst starts (a subscriber of the payee's events...). */
  beforeBurst?: (pair: Pair) => Promise<void>;
  /** Done once `faultAfter` transfers have answered; the burst goes on meanwhile. */
  fault: (pair: Pair) => Promise<void>;
  /** Whether the gateway process must still be running after the burst (default true). */
  survives?: boolean;
  /** What the burst's failures may be, checked before anything is retried. */
  failures: (failed: Transfer[], results: Transfer[]) => void;
  /** Checks of the fault itself, right after the burst (readiness while down...). */
  afterBurst?: (run: Omit<ScenarioRun, 'retried'>) => void | Promise<void>;
  /** Send the failed transfers again with their keys until they land (default true). */
  retry?: boolean;
  /** References besides the burst's that must have landed exactly once (the recovery probes). */
  alsoLanded?: () => string[];
  /** Checks once every transfer is known to have landed exactly once (log lines, recovery times...). */
  afterLanding?: (run: ScenarioRun) => void | Promise<void>;
  /** The figures printed beside the burst's counts. */
  figures: (run: ScenarioRun) => Record<string, unknown>;
}

/** Failures a database fault may cause: 503 with Retry-After, nothing else (no 500, no reset). */
export function onlyRetryable503(failed: Transfer[]): void {
  expect(failed.filter((t) => t.outcome !== 503 || t.retryAfter === null)).toEqual([]);
}

/**
 * Runs fault scenarios against one gateway process: a fresh funded payer and a payee per scenario,
 * the burst with the fault in its middle, the checks every fault shares (the process stays up,
 * only the failures the fault may cause, retries land, every transfer exactly once, balances and
 * ledger exact) around the scenario's own, and one `[fault figures]` line.
 */
export function faultRunner(context: {
  services: () => Services;
  gateway: () => { child: Child; url: string };
  funded: bigint;
}) {
  async function pair(): Promise<Pair> {
    const services = context.services();
    const payer = await seedTenant(services);
    const payee = await seedTenant(services);
    await fund(services, payer, context.funded);
    return { payer, payee };
  }

  return async function run(scenario: FaultScenario): Promise<ScenarioRun> {
    const { payer, payee } = await pair();
    await scenario.beforeBurst?.({ payer, payee });
    const results = await burst(() => context.gateway().url, payer, payee, scenario.prefix, {
      count: scenario.count,
      concurrency: scenario.concurrency,
      faultAfter: scenario.faultAfter,
      fault: () => scenario.fault({ payer, payee }),
    });
    const failed = results.filter((t) => !succeeded(t));
    if (scenario.survives !== false) expect(context.gateway().child.process.exitCode).toBeNull();
    await scenario.afterBurst?.({ payer, payee, results, failed });
    scenario.failures(failed, results);
    const retried =
      scenario.retry === false
        ? { ms: 0, conflicts: 0 }
        : await retryFailed(context.gateway().url, payer, payee, failed);
    const outcome: ScenarioRun = { payer, payee, results, failed, retried };
    await expectExactlyOnce(
      context.services(),
      payer,
      payee,
      [...results.map((t) => t.reference), ...(scenario.alsoLanded?.() ?? [])],
      context.funded,
    );
    await scenario.afterLanding?.(outcome);
    console.log(
      `[fault figures] ${scenario.name}: ${JSON.stringify({
        requests: results.length,
        failed: failed.length,
        outcomes: tally(results),
        ...scenario.figures(outcome),
      })}`,
    );
    return outcome;
  };
}

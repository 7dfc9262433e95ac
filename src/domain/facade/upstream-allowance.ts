import { DomainError } from '../errors.js';

/**
 * Less than this left of the deadline and a call is not sent: no answer could come in time, and a
 * timer may fire a millisecond before the deadline it was set for.
 */
const LEAST_CALL_MS = 10;

/** Why an upstream call was refused before it was sent, as `gateway_upstream_refusals_total` counts it. */
export type UpstreamRefusal = 'budget' | 'partner_budget' | 'retry_after' | 'deadline';

/** Over the operation's budget: its worst case is more upstream calls than UPSTREAM_CALL_BUDGET. */
export const overBudget = (calls: number, budget: number) =>
  new DomainError(
    'UPSTREAM_BUDGET_EXCEEDED',
    `This operation could make ${calls} calls to the upstream service; at most ${budget} are allowed per operation (UPSTREAM_CALL_BUDGET). Nothing was sent: split it into smaller operations.`,
  );

/** The request's deadline passed before this call: nothing more is sent for it. */
export const deadlinePassed = (deadlineMs: number) =>
  new DomainError(
    'UPSTREAM_TIMEOUT',
    `The upstream service did not answer within this request's ${Math.round(deadlineMs / 100) / 10} s. Retry later.`,
  );

/**
 * What one request may still ask of the upstream: one deadline for all its calls (each call gets
 * what remains, at most its own UPSTREAM_TIMEOUT_MS) and a number of calls, the operation's budget.
 * Made when the request's caller is known and carried on its credential, so every domain call of
 * the request draws on the same allowance without any async-local state.
 */
export class UpstreamAllowance {
  private readonly deadlineAt: number;
  private calls = 0;

  constructor(
    readonly deadlineMs: number,
    readonly callBudget: number,
    private readonly onRefusal: (why: UpstreamRefusal) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    this.deadlineAt = now() + deadlineMs;
  }

  /**
   * Takes one call: the milliseconds it may wait for its answer. Refused (nothing to send) once the
   * deadline has passed, or past the budget (the up-front count is of the worst case, so this holds
   * only if that count missed a call).
   */
  take(): number {
    const left = this.deadlineAt - this.now();
    if (left < LEAST_CALL_MS) {
      this.onRefusal('deadline');
      throw deadlinePassed(this.deadlineMs);
    }
    if (++this.calls > this.callBudget) {
      this.onRefusal('budget');
      throw overBudget(this.calls, this.callBudget);
    }
    return left;
  }

  /** Calls taken so far. */
  get taken(): number {
    return this.calls;
  }
}

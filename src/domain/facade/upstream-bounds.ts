import type { LimitRule, RateLimiter } from '../limits/rate-limiter.js';
import type { CallerCredential } from '../users/user-directory.js';
import { overBudget, UpstreamAllowance } from './upstream-allowance.js';
import { type RestV1Upstream, waitingFor } from './rest-v1-upstream.js';
import { partnerOf } from './upstream-partner.js';

export interface UpstreamBoundsSettings {
  /** UPSTREAM_REQUEST_DEADLINE_MS: all the upstream calls of one request. */
  requestDeadlineMs: number;
  /** UPSTREAM_CALL_BUDGET: the most upstream calls one operation may make at worst. */
  callBudget: number;
  /** UPSTREAM_CALLS_PER_MINUTE: upstream calls per partner credential per minute, across instances. */
  callsPerMinute: number;
}

/**
 * How much upstream work a facade's GraphQL operation may cause, checked before any of it is sent:
 * its worst case against the per-operation budget, the partner's wait (the upstream's last
 * Retry-After to it) and the partner's calls per minute (counted at that worst case, in Redis when
 * there is one, so every instance shares them); then, while it runs, one deadline and the budget for
 * all its calls (UpstreamAllowance). Each refusal is counted for `gateway_upstream_refusals_total`.
 */
export class UpstreamBounds {
  private readonly partnerRule: LimitRule;

  constructor(
    private readonly upstream: RestV1Upstream,
    private readonly limiter: RateLimiter,
    readonly settings: UpstreamBoundsSettings,
    /** Milliseconds now, from the gateway's clock (a test walks it). */
    private readonly now: () => number = Date.now,
  ) {
    this.partnerRule = {
      name: 'upstream-calls',
      max: settings.callsPerMinute,
      windowMs: 60_000,
      message: `This credential has used its ${settings.callsPerMinute} upstream calls per minute (UPSTREAM_CALLS_PER_MINUTE); nothing was sent.`,
    };
  }

  /** A request's allowance: its deadline starts now. */
  allowance(): UpstreamAllowance {
    return new UpstreamAllowance(
      this.settings.requestDeadlineMs,
      this.settings.callBudget,
      (why) => this.upstream.countRefusal(why),
      this.now,
    );
  }

  /**
   * Admits an operation whose worst case is `calls` upstream calls, or throws why not (nothing sent):
   * UPSTREAM_BUDGET_EXCEEDED over the budget; RATE_LIMITED while the upstream has told this partner
   * to wait, or past its calls per minute. An operation that calls nothing upstream is always admitted.
   */
  admit(calls: number, credential: CallerCredential | undefined): Promise<void> | undefined {
    if (calls === 0) return undefined;
    if (calls > this.settings.callBudget)
      throw this.upstream.refusal('budget', overBudget(calls, this.settings.callBudget));
    // Without a credential nothing is asked upstream: the guards refuse it first.
    if (!credential) return undefined;
    const partner = partnerOf(credential);
    const wait = this.upstream.waitOf(partner);
    const count = () =>
      this.limiter.consume(this.partnerRule, partner, calls).catch((error: unknown) => {
        throw this.upstream.refusal('partner_budget', error as Error);
      });
    if (wait === 0) return count();
    return Promise.resolve(wait).then((waitMs) => {
      if (waitMs > 0) throw this.upstream.refusal('retry_after', waitingFor(waitMs));
      return count();
    });
  }
}

import type { Executor } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import { DomainError } from '../errors.js';

const CACHE_MS = 1_000;
const RETRY_AFTER_SECONDS = 30;
const MAX_CACHED = 10_000;

/**
 * Plain text: every tenant that changes anything asks once a second, and building it through the
 * query builder each time cost more of the process than running it.
 */
const pendingOfTenant = statement(
  'jobs_pending_of_tenant_v1',
  `select count(*) as pending from (
    select 1 from jobs where tenant = $1 and status = 'pending' limit $2
  ) capped`,
);

/**
 * The per-tenant cap on pending background work. While a tenant has more than `max` jobs pending
 * (deliveries waiting on a dead endpoint, a flood of deposits), its requests that change anything
 * answer 429 with Retry-After instead of queueing more; reads keep working. Counts are cached for
 * a second per tenant, so the check costs one indexed count per tenant per second.
 */
export class TenantBacklog {
  /** The count per tenant, as a promise: concurrent requests of one tenant share one query. */
  private readonly cache = new Map<string, { pending: Promise<number>; at: number }>();

  constructor(
    private readonly db: Executor,
    private readonly max: number,
  ) {}

  pending(tenant: string): Promise<number> {
    const now = Date.now();
    const cached = this.cache.get(tenant);
    if (cached && now - cached.at < CACHE_MS) return cached.pending;
    const pending = runIn<{ pending: string | number }>(this.db, pendingOfTenant, [tenant, this.max + 1]).then(
      ([row]) => Number(row?.pending ?? 0),
    );
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(tenant, { pending, at: now });
    // A failed count is not remembered: the next request asks again.
    pending.catch(() => this.cache.delete(tenant));
    return pending;
  }

  /** Throws RATE_LIMITED when the tenant is over its cap. */
  async check(tenant: string): Promise<void> {
    if ((await this.pending(tenant)) <= this.max) return;
    throw new DomainError(
      'RATE_LIMITED',
      `Too much background work is pending for this account (more than ${this.max} jobs). Retry in ${RETRY_AFTER_SECONDS} s.`,
      { retryAfter: RETRY_AFTER_SECONDS },
    );
  }
}

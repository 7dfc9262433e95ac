import type { Redis } from 'ioredis';

/** Longest wait kept from one Retry-After: an upstream that asks for a day is taken at an hour. */
const MAX_WAIT_MS = 3_600_000;
/** Waits kept in this process at once: one per partner that was told to wait; the oldest go first. */
const MAX_LOCAL = 10_000;

/**
 * The upstream's Retry-After, per partner credential: after a 429 every instance refuses that
 * partner's upstream calls until the time it named, without calling the upstream (whose answer
 * would only be another 429, and each may count against the partner there). Kept in Redis when
 * there is one (`SET … PX`, so the key goes when the wait ends), always also in this process, so
 * that the instance that met the 429 refuses at once and one without Redis still does.
 * A Redis that fails is left out: the local wait still holds.
 */
export class UpstreamWaits {
  private readonly local = new Map<string, number>();

  constructor(
    /** The shared store, once connected (the rate limiter's client); undefined: this process only. */
    private readonly redis: () => Redis | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds `partner` must still wait; 0 when it need not. */
  remainingMs(partner: string): number | Promise<number> {
    const local = this.localRemaining(partner);
    if (local > 0) return local;
    const redis = this.redis();
    if (redis?.status !== 'ready') return 0;
    return redis.get(keyOf(partner)).then(
      (until) => {
        const at = Number(until);
        if (!Number.isFinite(at)) return 0;
        const left = at - this.now();
        // Remembered here too: this instance's next calls need not ask Redis.
        if (left > 0) this.remember(partner, at);
        return Math.max(0, left);
      },
      () => 0,
    );
  }

  /** The upstream told `partner` to wait `ms`: kept here and, when connected, in Redis for every instance. */
  async hold(partner: string, ms: number): Promise<void> {
    const wait = Math.min(Math.max(ms, 0), MAX_WAIT_MS);
    if (wait === 0) return;
    const until = this.now() + wait;
    this.remember(partner, Math.max(until, this.local.get(partner) ?? 0));
    const redis = this.redis();
    if (redis?.status !== 'ready') return;
    await redis.set(keyOf(partner), String(until), 'PX', wait).catch(() => undefined);
  }

  private localRemaining(partner: string): number {
    const until = this.local.get(partner);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left;
    this.local.delete(partner);
    return 0;
  }

  private remember(partner: string, until: number): void {
    this.local.delete(partner);
    if (this.local.size >= MAX_LOCAL) this.local.delete(this.local.keys().next().value!);
    this.local.set(partner, until);
  }
}

const keyOf = (partner: string) => `pgw:upstream-wait:${partner}`;

import type { Redis } from 'ioredis';
import { closeRedis } from '../redis-close.js';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError } from '../errors.js';

export interface LimitRule {
  /** Distinguishes buckets: two rules with the same identity never share counts. */
  name: string;
  max: number;
  windowMs: number;
  message?: string;
}

/**
 * The one limiter behind GraphQL fields, REST routes and /connect. Each check-and-record is one
 * atomic step: in memory (one JS turn) by default, or one Redis script when Redis is configured,
 * so every instance shares exact counts. If Redis fails, a per-process memory limiter stands in
 * rather than letting every request through or refusing them all (the Redis client's state is
 * followed by whoever owns `redis`, for readiness and logging).
 */
export class RateLimiter {
  private limiters = new Map<string, RateLimiterAbstract>();
  /** Rules are long-lived objects (policy, schema directives): find their limiter without building a key. */
  private byRule = new WeakMap<LimitRule, RateLimiterAbstract>();
  private client: Redis | undefined;
  /** While ioredis loads (see `connect`). */
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(
    redis: Redis | undefined,
    private readonly keyPrefix = 'pgw:rl',
  ) {
    this.client = redis;
  }

  /** The Redis client, once there is one. */
  get redis(): Redis | undefined {
    return this.client;
  }

  /**
   * With a URL, counts go to Redis once ioredis has loaded and connected: ioredis (0.2 MB) loads
   * only in servers configured with Redis, as a start without it spent about 50 ms loading it.
   * Until then limits count in memory; `ready()` waits for both. `onClient` is given the client as
   * soon as it exists (for readiness and the one log line per outage).
   */
  static connect(
    redisUrl: string | undefined,
    onStoreError?: (error: unknown) => void,
    onClient?: (redis: Redis) => void,
  ): RateLimiter {
    const limiter = new RateLimiter(undefined);
    if (!redisUrl) return limiter;
    limiter.connecting = import('ioredis')
      .then(({ Redis }) => {
        if (limiter.closed) return;
        // enableOfflineQueue off: while Redis is unreachable, calls fail fast into the insurance limiter.
        const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
        // Always a listener: ioredis prints every unhandled connection error otherwise.
        redis.on('error', (error) => onStoreError?.(error));
        limiter.client = redis;
        // Limiters made while it loaded counted in memory: from now on each rule's counts are Redis's.
        limiter.limiters = new Map();
        limiter.byRule = new WeakMap();
        onClient?.(redis);
      })
      // Not loaded (or not made): limits go on counting in this process, as while Redis is away.
      .catch((error: unknown) => onStoreError?.(error));
    return limiter;
  }

  /** Counts `points` against `identity` under `rule`; throws RATE_LIMITED with the wait when over. */
  consume(rule: LimitRule, identity: string, points = 1): Promise<void> {
    const limiter = this.limiterFor(rule);
    const memory = memoryStorageOf(limiter);
    if (memory) {
      // The in-memory store counts in one JS turn anyway: counted here, without the promise and
      // closure RateLimiterMemory.consume builds around the same `incrby` (its options here set no
      // block duration and no even spreading, so nothing else of it applies).
      const counted = memory.incrby(limiter.getKey(identity), points, limiter.duration);
      return counted.consumedPoints > limiter.points ? Promise.reject(refusal(rule, counted)) : COUNTED;
    }
    return limiter.consume(identity, points).then(
      () => undefined,
      (rejection: unknown) => {
        throw rejection instanceof RateLimiterRes ? refusal(rule, rejection) : rejection;
      },
    );
  }

  /**
   * Resolves true once Redis is connected, or false after `timeoutMs`. Until it is, each process
   * counts in memory (the insurance limiter), so a server should wait for this before it listens:
   * otherwise its first requests are limited per process instead of across instances.
   */
  async ready(timeoutMs = 5000): Promise<boolean> {
    await this.connecting;
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Whether Redis is connected right now; undefined when no Redis is configured. */
  redisConnected(): boolean | undefined {
    if (this.connecting && !this.redis) return false;
    return this.redis ? this.redis.status === 'ready' : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    await closeRedis(this.redis);
  }

  private limiterFor(rule: LimitRule): RateLimiterAbstract {
    const known = this.byRule.get(rule);
    if (known) return known;
    const id = `${rule.name}:${rule.max}:${rule.windowMs}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const options = {
        points: rule.max,
        duration: Math.max(1, Math.ceil(rule.windowMs / 1000)),
        keyPrefix: `${this.keyPrefix}:${id}`,
      };
      limiter = this.redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.redis,
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.limiters.set(id, limiter);
    }
    this.byRule.set(rule, limiter);
    return limiter;
  }
}

const COUNTED: Promise<void> = Promise.resolve();

/** The fixed-window counter behind RateLimiterMemory; undefined for any other store. */
interface MemoryCounter {
  incrby(key: string, points: number, durationSeconds: number): RateLimiterRes;
}

function memoryStorageOf(limiter: RateLimiterAbstract): MemoryCounter | undefined {
  if (!(limiter instanceof RateLimiterMemory)) return undefined;
  const storage = (limiter as unknown as { _memoryStorage?: MemoryCounter })._memoryStorage;
  return typeof storage?.incrby === 'function' ? storage : undefined;
}

function refusal(rule: LimitRule, result: RateLimiterRes): DomainError {
  const retryAfter = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
  return new DomainError(
    'RATE_LIMITED',
    rule.message ??
      `Rate limit exceeded: at most ${rule.max} per ${describeWindow(rule.windowMs)}. Retry in ${retryAfter} s.`,
    { retryAfter },
  );
}

function describeWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  return `${Math.ceil(ms / 1000)} seconds`;
}

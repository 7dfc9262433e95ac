import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { lazyLoad } from '../lazy-load.js';
import { createGuardedAgent } from '../webhooks/safe-http.js';
import { DomainError } from '../errors.js';
import type { UpstreamRefusal } from './upstream-allowance.js';
import { retryAfterSeconds, transportFault, type UpstreamFault, UpstreamFaultError } from './upstream-outcomes.js';
import type { UpstreamWaits } from './upstream-waits.js';

export interface UpstreamSettings {
  /** UPSTREAM_URL: its path, if any, is a prefix of every request's path. */
  baseUrl: string;
  /** Deadline from sending to the answer's headers, and between chunks of its body. */
  timeoutMs: number;
  /** False: every connection is checked against private, loopback and link-local addresses (production). */
  privateAddresses: boolean;
}

export interface UpstreamRequest {
  method: string;
  /** Path and query exactly as the caller sent them (`/api/v1/bills/records?page=2`). */
  path: string;
  /** Sent as given: the caller of `send` has dropped what must not be forwarded. */
  headers: Record<string, string | string[]>;
  body?: Buffer | undefined;
  /**
   * Whose call it is (a hash of the partner's credential): refused while the upstream has told that
   * partner to wait, and a 429 it gets tells every instance to wait. Absent: no partner's (none).
   */
  partner?: string | undefined;
  /** What remains of the request's deadline; the call waits the lesser of it and UPSTREAM_TIMEOUT_MS. */
  timeoutMs?: number | undefined;
}

export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** Streamed as it arrives; a pause longer than the deadline ends it with an error. */
  body: Readable;
}

/**
 * The REST v1 deployment a facade fronts, reached over one undici agent. Every call has a deadline
 * and is sent once: undici retries nothing on its own, so a POST that timed out is never re-sent
 * (its outcome is the upstream's to tell). No answer in time, or none at all, is an
 * UpstreamFaultError, counted by kind for `gateway_upstream_faults_total`.
 */
export class RestV1Upstream {
  private readonly origin: string;
  private readonly prefix: string;
  private readonly faults = new Map<UpstreamFault, number>();
  private readonly refusals = new Map<UpstreamRefusal, number>();
  private readonly dispatcher: () => Promise<Dispatcher>;
  private opened: Dispatcher | undefined;

  constructor(
    readonly settings: UpstreamSettings,
    /** The upstream's Retry-After per partner (shared through Redis when there is one). */
    private readonly waits?: UpstreamWaits,
  ) {
    const url = new URL(settings.baseUrl);
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.dispatcher = lazyLoad(async () => {
      const { Agent } = await import('undici');
      const connectTimeout = Math.min(settings.timeoutMs, 10_000);
      this.opened = settings.privateAddresses
        ? new Agent({ connect: { timeout: connectTimeout } })
        : await createGuardedAgent();
      return this.opened;
    });
  }

  async send(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const { partner } = request;
    // Known locally (the common case, no wait) without a promise; Redis is asked only when configured.
    const wait = partner !== undefined && this.waits ? this.waits.remainingMs(partner) : 0;
    if (wait !== 0) {
      const waitMs = await wait;
      if (waitMs > 0) throw this.refusal('retry_after', waitingFor(waitMs));
    }
    const dispatcher = await this.dispatcher();
    const timeoutMs = Math.min(this.settings.timeoutMs, request.timeoutMs ?? Number.POSITIVE_INFINITY);
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, timeoutMs);
    try {
      const answer = await dispatcher.request({
        origin: this.origin,
        path: `${this.prefix}${request.path}`,
        method: request.method as Dispatcher.HttpMethod,
        headers: request.headers,
        body: request.body ?? null,
        signal: deadline.signal,
        bodyTimeout: timeoutMs,
      });
      if (answer.statusCode === 429 && partner !== undefined && this.waits)
        await this.waits.hold(partner, retryAfterSeconds(header(answer.headers['retry-after'])) * 1000);
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    } catch (cause) {
      throw this.fault(transportFault(cause, timedOut), cause, undefined, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A call refused before it was sent, counted for `gateway_upstream_refusals_total`. */
  refusal<E extends Error>(why: UpstreamRefusal, error: E): E {
    this.countRefusal(why);
    return error;
  }

  countRefusal(why: UpstreamRefusal): void {
    this.refusals.set(why, (this.refusals.get(why) ?? 0) + 1);
  }

  /** Calls refused before they were sent since the process started, by why (read at each metrics scrape). */
  refusalCounts(): ReadonlyMap<UpstreamRefusal, number> {
    return this.refusals;
  }

  /** How long `partner` must still wait before its next upstream call (0: it need not). */
  waitOf(partner: string): number | Promise<number> {
    return this.waits?.remainingMs(partner) ?? 0;
  }

  /** The fault, counted: callers that find a fault in an answer (a bad shape) record it here too. */
  fault(
    kind: UpstreamFault,
    cause?: unknown,
    mismatch?: string,
    timeoutMs = this.settings.timeoutMs,
  ): UpstreamFaultError {
    this.faults.set(kind, (this.faults.get(kind) ?? 0) + 1);
    return new UpstreamFaultError(kind, timeoutMs, {
      ...(cause !== undefined ? { cause } : {}),
      ...(mismatch !== undefined ? { mismatch } : {}),
    });
  }

  /** Faults since the process started, by kind (read at each metrics scrape). */
  faultCounts(): ReadonlyMap<UpstreamFault, number> {
    return this.faults;
  }

  async close(): Promise<void> {
    await this.opened?.close();
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A partner the upstream told to wait: refused here, as the upstream would, with what remains of the wait. */
export function waitingFor(waitMs: number): DomainError {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return new DomainError(
    'RATE_LIMITED',
    `The upstream service is rate limiting this credential; nothing was sent. Retry in ${retryAfter} s.`,
    { retryAfter },
  );
}

import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { lazyLoad } from '../lazy-load.js';
import { createGuardedAgent } from '../webhooks/safe-http.js';
import { transportFault, type UpstreamFault, UpstreamFaultError } from './upstream-outcomes.js';

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
  private readonly dispatcher: () => Promise<Dispatcher>;
  private opened: Dispatcher | undefined;

  constructor(readonly settings: UpstreamSettings) {
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
    const dispatcher = await this.dispatcher();
    const { timeoutMs } = this.settings;
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
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    } catch (cause) {
      throw this.fault(transportFault(cause, timedOut), cause);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The fault, counted: callers that find a fault in an answer (a bad shape) record it here too. */
  fault(kind: UpstreamFault, cause?: unknown, mismatch?: string): UpstreamFaultError {
    this.faults.set(kind, (this.faults.get(kind) ?? 0) + 1);
    return new UpstreamFaultError(kind, this.settings.timeoutMs, {
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

import { hostname } from 'node:os';

/** One API request as the key's request log shows it: never a body, never a header. */
export interface LoggedRequest {
  /** When the answer went out, Unix milliseconds. */
  at: number;
  method: string;
  /** The path only: a query string is replaced by `?…` (its values can hold tokens or documents). */
  path: string;
  statusCode: number;
  durationMs: number;
  requestId: string;
}

export interface KeyRequestLogLimits {
  /** Requests kept per key: its most recent. */
  perKey: number;
  /** Requests kept in all: the instance's most recent, whatever their key. */
  overall: number;
}

export const DEFAULT_KEY_REQUEST_LOG_LIMITS: KeyRequestLogLimits = { perKey: 100, overall: 10_000 };

/** Long enough for every route of the API; a longer path is cut (and marked) so an entry stays small. */
export const MAX_LOGGED_PATH = 200;

/** The URL as it may be kept: the path, cut to length, and only the fact that a query string was there. */
export function loggablePath(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const cut = path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
  return query === -1 ? cut : `${cut}?…`;
}

/** This process as a person reads it on the page: the host (a container's id) and the process id. */
export const INSTANCE_NAME = `${hostname()} (pid ${process.pid})`;

/**
 * The last requests of each API key, in this process's memory only: no database write per request,
 * and nothing shared between instances (each shows the requests it answered).
 *
 * Memory is bounded whatever the traffic: at most `overall` entries are held, across at most
 * `overall` keys, each entry of bounded size (the path is cut, the request id is at most 128
 * characters, see http/request-id.ts). Two bounds, one order:
 *
 * - a key keeps its `perKey` most recent requests; its next one drops its oldest;
 * - the instance keeps its `overall` most recent requests; the next one drops the oldest still
 *   held, whichever key it belongs to. A quiet key's requests stay while they are among them.
 *
 * Both are queues in arrival order: `order` is a circular array of every request recorded (the
 * last `overall` of them), each key's list holds its own in the same order. So when `order`
 * overwrites its oldest slot, that request, unless its key already dropped it, is the first of its
 * key's list. Every operation is O(1) but for the shift of a key's list (at most `perKey` long).
 */
export class KeyRequestLog {
  private readonly byKey = new Map<string, LoggedRequest[]>();
  private readonly order: Array<{ keyId: string; entry: LoggedRequest } | undefined>;
  private next = 0;

  constructor(
    readonly limits: KeyRequestLogLimits = DEFAULT_KEY_REQUEST_LOG_LIMITS,
    /** Shown on the page: which instance's requests these are. */
    readonly instance: string = INSTANCE_NAME,
  ) {
    if (!Number.isInteger(limits.perKey) || limits.perKey < 1 || !Number.isInteger(limits.overall))
      throw new RangeError('Request log limits must be positive integers.');
    if (limits.overall < limits.perKey) throw new RangeError('The overall bound must hold at least one key’s.');
    this.order = new Array(limits.overall);
  }

  record(keyId: string, request: LoggedRequest): void {
    const evicted = this.order[this.next];
    if (evicted) {
      const list = this.byKey.get(evicted.keyId);
      if (list && list[0] === evicted.entry) {
        list.shift();
        if (list.length === 0) this.byKey.delete(evicted.keyId);
      }
    }
    this.order[this.next] = { keyId, entry: request };
    this.next = (this.next + 1) % this.order.length;
    let list = this.byKey.get(keyId);
    if (!list) {
      list = [];
      this.byKey.set(keyId, list);
    }
    list.push(request);
    if (list.length > this.limits.perKey) list.shift();
  }

  /** The key's requests held here, newest first (copies: the page cannot change the log). */
  of(keyId: string): LoggedRequest[] {
    return (this.byKey.get(keyId) ?? []).map((entry) => ({ ...entry })).reverse();
  }

  /** How many requests are held, over all keys. */
  get size(): number {
    let total = 0;
    for (const list of this.byKey.values()) total += list.length;
    return total;
  }

  get keys(): number {
    return this.byKey.size;
  }
}

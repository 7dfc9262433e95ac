import { generate, type Upstream } from './upstream-error.js';

/** How an adapter reads its provider's answer: the data, or the provider's words on what went wrong. */
export type ReadAnswer<T> = (
  status: number,
  body: unknown,
) => { data: T } | { message?: string | undefined; field?: string | undefined };

export interface UpstreamRequest {
  upstream: Upstream;
  url: string;
  method: string;
  headers?: Record<string, string>;
  /** Sent as JSON, or as-is when a string or URLSearchParams. */
  body?: unknown;
  timeoutMs: number;
  /** A call that may move money or create something: no clear answer is "outcome unknown". */
  mutating: boolean;
  /** A lookup of one thing: 404 means the provider does not know it. */
  lookup?: boolean;
  /** What a 404 lookup says the provider does not know. */
  what?: string;
}

/**
 * One HTTP call to a provider: a deadline on every call, the body read whatever the status, and
 * every failure classified by `generate` (the adapter only says how to read its format).
 */
export async function requestUpstream<T>(request: UpstreamRequest, read: ReadAnswer<T>): Promise<T> {
  const { upstream, mutating } = request;
  const headers = { ...request.headers };
  let body: string | URLSearchParams | undefined;
  if (request.body instanceof URLSearchParams || typeof request.body === 'string') body = request.body;
  else if (request.body !== undefined) {
    body = JSON.stringify(request.body);
    headers['content-type'] ??= 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (cause) {
    throw generate({ upstream, mutating, cause });
  }
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const answer = parsed === undefined ? undefined : read(response.status, parsed);
  if (answer && 'data' in answer) return answer.data;
  throw generate({
    upstream,
    mutating,
    httpStatus: response.status,
    unreadable: parsed === undefined,
    lookup: request.lookup ?? false,
    message: response.status === 404 && request.lookup ? request.what : answer?.message,
    field: answer?.field,
    retryAfterSeconds: response.status === 429 ? rateLimitWaitMs(response) / 1000 : undefined,
  });
}

/** How long a 429 asks us to wait: Retry-After, else x-ratelimit-reset (Unix seconds), else a second. */
export function rateLimitWaitMs(response: Response): number {
  const retryAfter = Number(response.headers.get('retry-after'));
  if (Number.isFinite(retryAfter) && retryAfter > 0) return retryAfter * 1000;
  const reset = Number(response.headers.get('x-ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - Date.now());
  return 1000;
}

import { type AnswerShape, pointerWithin } from './answer-shape.js';
import { generate, type Upstream } from './upstream-error.js';

/**
 * How an adapter reads its provider's answer: the data (and where in the body it sits, `/data` for
 * an envelope, so a mismatch names its path in the body); the provider's words on what went wrong;
 * or, for a body that is neither its success nor its documented error (a 200 `{}`), where it stops
 * being the provider's format. Only a documented error is a refusal: a call that may have moved
 * money is never failed on a body nobody can read.
 */
export type ReadAnswer = (
  status: number,
  body: unknown,
) =>
  | { data: unknown; at?: string }
  | { message?: string | undefined; field?: string | undefined }
  | { mismatch: string };

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
 * One HTTP call to a provider: a deadline on every call, the body read whatever the status, the
 * data checked against its documented shape, and every failure classified by `generate` (the
 * adapter only says how to read its format and what shape its data has). An answer that is not its
 * documented shape is unreadable: an upstream fault on a read, "outcome unknown" on a call that may
 * have moved money, never something the adapter goes on to trip over.
 */
export async function requestUpstream<T>(
  request: UpstreamRequest,
  read: ReadAnswer,
  shape: AnswerShape<T>,
): Promise<T> {
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
  const mismatch = (at: string) =>
    generate({ upstream, mutating, httpStatus: response.status, unreadable: true, mismatch: at });
  let answer: ReturnType<ReadAnswer> | undefined;
  let unreadable = parsed === undefined;
  try {
    answer = parsed === undefined ? undefined : read(response.status, parsed);
  } catch {
    // A body the adapter cannot even look into (null, a bare string where its envelope should be).
    if (response.ok) throw mismatch('/');
    unreadable = true;
  }
  if (answer && 'data' in answer) {
    const at = shape.mismatchAt(answer.data);
    if (at === undefined) return answer.data as T;
    throw mismatch(pointerWithin(answer.at, at));
  }
  if (answer && 'mismatch' in answer) {
    if (response.ok) throw mismatch(answer.mismatch);
    unreadable = true;
    answer = undefined;
  }
  throw generate({
    upstream,
    mutating,
    httpStatus: response.status,
    unreadable,
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

import { DomainError, type ErrorCode } from '../errors.js';

/**
 * What a failed call to a provider means for the operation that made it, whichever provider it was:
 * - `refused`: the provider answered and did not do it (a 4xx about the request): the operation fails;
 * - `outcome_unknown`: a call that moves money got no clear answer (timeout, 5xx, an unreadable
 *   body, or a 2xx whose body is not the documented shape): it may have happened, so the operation
 *   stays pending until the provider is asked again;
 * - `rate_limited`: the provider turned the gateway away for now (429): nothing happened, retry later;
 * - `unavailable`: nothing happened (unreachable on a read, our credentials refused, a 5xx or an
 *   answer not in its documented shape on a read).
 */
export type UpstreamKind = 'refused' | 'outcome_unknown' | 'rate_limited' | 'unavailable';

/** Who was called, as the messages name it. */
export interface Upstream {
  /** The provider's name as records keep it: flutterwave, paycrest, jupiter, solana-rpc. */
  name: string;
  /** How a message names it to a partner: "The payments provider". */
  label: string;
  /** What the operator checks when the provider refuses the gateway's credentials. */
  credentialsHint?: string;
}

/** A provider's failure as the adapter saw it, before it is classified. */
export interface RawUpstreamFailure {
  upstream: Upstream;
  /** True for a call that may move money or create something if it reached the provider. */
  mutating: boolean;
  /** The HTTP status, absent when no answer came (network error, timeout). */
  httpStatus?: number | undefined;
  /** The answer's body could not be read as the provider's format. */
  unreadable?: boolean;
  /**
   * Where a 2xx answer first departs from its documented shape (a JSON pointer such as
   * `/data/0/id`): the answer is unreadable, and its message names the path, never the body.
   */
  mismatch?: string | undefined;
  /** A lookup of one thing: a 404 is "the provider does not know it", not a refused request. */
  lookup?: boolean;
  /** The provider's own words, when it gave any. */
  message?: string | undefined;
  /** The request field the provider's refusal names. */
  field?: string | undefined;
  /** Seconds the provider asks us to wait (Retry-After), for a 429. */
  retryAfterSeconds?: number | undefined;
  cause?: unknown;
}

/**
 * A classified provider failure. It is a DomainError, so one a request cannot handle reaches the
 * partner with the same status and body as every other error (a refusal 400 or 404, the rest 503).
 */
export class UpstreamError extends DomainError {
  constructor(
    readonly kind: UpstreamKind,
    readonly upstream: string,
    code: ErrorCode,
    message: string,
    options: {
      field?: string | undefined;
      retryAfter?: number | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, {
      ...(options.field ? { field: options.field, details: [{ field: options.field, message }] } : {}),
      ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}),
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
    this.name = 'UpstreamError';
  }

  /** The provider's HTTP status, when it answered (set by `generate`). */
  httpStatus: number | undefined;
  /** Where the answer departed from its documented shape, when that was the fault (set by `generate`). */
  mismatch: string | undefined;
}

/**
 * The one classifier (after stripe-node's `Error.generate(raw)`): every adapter hands its failure
 * here, so "did it happen?" is decided in one place for every provider.
 */
export function generate(raw: RawUpstreamFailure): UpstreamError {
  const error = classify(raw);
  error.httpStatus = raw.httpStatus;
  error.mismatch = raw.mismatch;
  return error;
}

function classify(raw: RawUpstreamFailure): UpstreamError {
  const { upstream, mutating, httpStatus: status } = raw;
  const label = upstream.label;
  const cause = raw.cause;
  if (status === undefined) {
    return mutating
      ? new UpstreamError('outcome_unknown', upstream.name, 'SERVICE_UNAVAILABLE', `${label} did not answer in time.`, {
          cause,
        })
      : new UpstreamError(
          'unavailable',
          upstream.name,
          'SERVICE_UNAVAILABLE',
          `${label} could not be reached. Retry later.`,
          { cause },
        );
  }
  if (status === 429) {
    const seconds = Math.max(1, Math.ceil(raw.retryAfterSeconds ?? 1));
    return new UpstreamError(
      'rate_limited',
      upstream.name,
      'SERVICE_UNAVAILABLE',
      `${label} is rate limiting this gateway. Retry in ${seconds} s.`,
      { retryAfter: seconds, cause },
    );
  }
  if (status === 401 || status === 403) {
    return new UpstreamError(
      'unavailable',
      upstream.name,
      'SERVICE_UNAVAILABLE',
      `${label} refused the gateway's credentials${upstream.credentialsHint ? `; the operator must check ${upstream.credentialsHint}` : ''}.`,
      { cause },
    );
  }
  if (status === 404 && raw.lookup)
    return new UpstreamError('refused', upstream.name, 'NOT_FOUND', `${label} does not know ${raw.message ?? 'it'}.`, {
      cause,
    });
  if (status >= 500 || raw.unreadable || raw.mismatch !== undefined) {
    const detail =
      raw.mismatch !== undefined
        ? `its answer does not have the documented shape at ${raw.mismatch}`
        : (raw.message ?? `HTTP ${status}`);
    return mutating
      ? new UpstreamError('outcome_unknown', upstream.name, 'SERVICE_UNAVAILABLE', `${label} failed (${detail}).`, {
          cause,
        })
      : new UpstreamError(
          'unavailable',
          upstream.name,
          'SERVICE_UNAVAILABLE',
          `${label} is unavailable (${detail}). Retry later.`,
          { cause },
        );
  }
  const field = raw.field ?? 'request';
  return new UpstreamError(
    'refused',
    upstream.name,
    'BAD_USER_INPUT',
    `${label} refused ${field}: ${raw.message ?? 'unknown error'}`,
    { field, cause },
  );
}

/**
 * What a failed provider call means for an operation already recorded: `refused` ends it (failed,
 * its hold released); anything else (outcome unknown, unavailable, rate limited, a bug) leaves it
 * pending for the provider to be asked again, never a guess.
 */
export function failureOutcome(error: unknown): { refused: true; reason: string } | { refused: false; reason: string } {
  if (error instanceof UpstreamError && error.kind === 'refused') return { refused: true, reason: error.message };
  // A refusal an adapter raised before calling out (an input the provider cannot serve) ends it too.
  if (
    error instanceof DomainError &&
    !(error instanceof UpstreamError) &&
    error.status < 500 &&
    error.code !== 'RATE_LIMITED'
  )
    return { refused: true, reason: error.message };
  return {
    refused: false,
    reason: error instanceof UpstreamError ? error.message : 'The provider did not answer clearly.',
  };
}

import { billNotFound } from '../bills/bill-not-found.js';
import { DomainError, type ErrorCode } from '../errors.js';

/**
 * How the upstream REST v1 deployment's answers reach this gateway's callers in facade mode: the
 * one table, used by every upstream-backed field of the graph and by the REST pass-through's own
 * errors. Messages are ours, never the upstream's words or anything it echoed (a key, a URL).
 */

/** What went wrong in reaching the upstream, as counted in `gateway_upstream_faults_total`. */
export type UpstreamFault = 'timeout' | 'unreachable' | 'server_error' | 'bad_answer';

/** Statuses the upstream answers about the caller (its credential, its permission, its limits): passed on as ours. */
const REFUSALS: Record<number, { code: ErrorCode; message: string }> = {
  400: { code: 'BAD_USER_INPUT', message: 'The upstream service refused the request as invalid.' },
  401: {
    code: 'UNAUTHENTICATED',
    message: 'The API key or access token is invalid, expired or revoked (the upstream service refused it).',
  },
  403: {
    code: 'FORBIDDEN',
    message: "This credential's permission does not allow this operation (the upstream service refused it).",
  },
  404: { code: 'NOT_FOUND', message: 'The upstream service does not know it.' },
  429: { code: 'RATE_LIMITED', message: 'The upstream service is rate limiting this credential.' },
};

const FAULTS: Record<UpstreamFault, { code: ErrorCode; message: (seconds: number) => string }> = {
  timeout: {
    code: 'UPSTREAM_TIMEOUT',
    message: (seconds) => `The upstream service did not answer within ${seconds} s. Retry later.`,
  },
  unreachable: {
    code: 'UPSTREAM_UNAVAILABLE',
    message: () => 'The upstream service could not be reached. Retry later.',
  },
  server_error: { code: 'UPSTREAM_UNAVAILABLE', message: () => 'The upstream service failed. Retry later.' },
  bad_answer: {
    code: 'UPSTREAM_BAD_ANSWER',
    message: () => "The upstream service answered in a shape the spec does not give; this gateway's operator is told.",
  },
};

export class UpstreamFaultError extends DomainError {
  constructor(
    readonly fault: UpstreamFault,
    timeoutMs: number,
    options: { cause?: unknown; mismatch?: string } = {},
  ) {
    const { code, message } = FAULTS[fault];
    super(code, message(Math.round(timeoutMs / 100) / 10), options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'UpstreamFaultError';
    this.mismatch = options.mismatch;
  }

  /** Where a bad answer first departed from the spec's shape (a JSON pointer), for the logs; never a value. */
  readonly mismatch: string | undefined;
}

/**
 * The spec's error bodies that say more than their status (Errors, Error body shapes): the code a
 * GraphQL caller gets for each, with our own message. `asked` is what the request named (the
 * reference looked up), never a value echoed back by the upstream.
 */
const ERROR_BODIES: Record<string, { status: number; error: (asked: Asked) => DomainError }> = {
  BILL_NOT_FOUND: { status: 404, error: ({ reference }) => billNotFound(reference ?? '') },
  // The spec lists an insufficient-balance answer of the token transfer without its body or
  // status: read as this gateway's REST writes it (400, `errorCode` INSUFFICIENT_FUNDS).
  INSUFFICIENT_FUNDS: {
    status: 400,
    error: () =>
      new DomainError(
        'INSUFFICIENT_FUNDS',
        'The balance is too small for this operation (the upstream service refused it).',
      ),
  },
};

/** What the request to the upstream named, for the codes that carry it. */
export interface Asked {
  reference?: string | undefined;
}

/**
 * What an upstream answer that is not a success means: a refusal about the caller keeps its
 * meaning (401, 403, 404, 429 with the upstream's Retry-After, 400), and a spec error body its own
 * code (BILL_NOT_FOUND, INSUFFICIENT_FUNDS); a 5xx is the upstream's failure, and any other status one this gateway
 * cannot read as the spec's (both faults, counted by the caller that met them). `body` is the
 * answer's JSON when it had any.
 */
export function statusOutcome(
  status: number,
  retryAfterHeader: string | undefined,
  body?: unknown,
  asked: Asked = {},
): DomainError | UpstreamFault {
  const errorCode = isObject(body) && typeof body['errorCode'] === 'string' ? body['errorCode'] : undefined;
  const known = errorCode === undefined ? undefined : ERROR_BODIES[errorCode];
  if (known?.status === status) return known.error(asked);
  const refusal = REFUSALS[status];
  if (!refusal) return status >= 500 ? 'server_error' : 'bad_answer';
  if (status === 400) return badInputOf(refusal.message, body);
  if (status !== 429) return new DomainError(refusal.code, refusal.message);
  // The spec gives the wait in the header; its rate-limit body repeats it as `retryAfter`.
  const fromBody = isObject(body) && typeof body['retryAfter'] === 'number' ? String(body['retryAfter']) : undefined;
  const retryAfter = retryAfterSeconds(retryAfterHeader ?? fromBody);
  return new DomainError(refusal.code, `${refusal.message} Retry in ${retryAfter} s.`, { retryAfter });
}

/** A field name as an error body may give it (`amount`, `scheduleData.executionDate`, `items[0]`): a name, never a sentence. */
const FIELD_NAME = /^[A-Za-z_][\w.[\]]{0,63}$/;

/**
 * A 400: the fields an error body names in `details` (this gateway's REST names every bad field
 * there) are passed on by name, each with our own message; the upstream's sentences are not.
 */
function badInputOf(message: string, body: unknown): DomainError {
  const details = isObject(body) && Array.isArray(body['details']) ? body['details'] : [];
  const fields = [
    ...new Set(
      details.flatMap((d) =>
        isObject(d) && typeof d['field'] === 'string' && FIELD_NAME.test(d['field']) ? [d['field']] : [],
      ),
    ),
  ].slice(0, 20);
  if (fields.length === 0) return new DomainError('BAD_USER_INPUT', message);
  return new DomainError('BAD_USER_INPUT', `${message} Fields refused: ${fields.join(', ')}.`, {
    field: fields[0]!,
    details: fields.map((field) => ({ field, message: `The upstream service refused ${field}.` })),
  });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Retry-After as seconds (at least 1): a number of seconds or an HTTP date; anything else is 1. */
export function retryAfterSeconds(header: string | undefined, now = Date.now()): number {
  if (!header) return 1;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds));
  const at = Date.parse(header);
  return Number.isNaN(at) ? 1 : Math.max(1, Math.ceil((at - now) / 1000));
}

/** The fault a failed send was: no answer in time, or none at all. */
export function transportFault(error: unknown, timedOut: boolean): UpstreamFault {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (
    timedOut ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return 'timeout';
  return 'unreachable';
}

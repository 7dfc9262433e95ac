import { STATUS_CODES } from 'node:http';
import { GraphQLError } from 'graphql';
import { type DatabaseFault, databaseFaultOf } from '../db/faults.js';
import { DomainError, type ErrorCode } from './errors.js';

/**
 * The one place errors become wire formats: GraphQL `extensions`, REST v1 bodies (the seed's
 * three shapes) and their HTTP status. Nothing else decides how an error looks.
 */

/** The DomainError behind anything a resolver, the executor or a handler threw. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof GraphQLError) {
    if (error.originalError) return toDomainError(error.originalError);
    // No original error: the executor itself refused the operation (bad variables, validation).
    return new DomainError('BAD_USER_INPUT', error.message, { cause: error });
  }
  const fault = databaseFaultOf(error);
  if (fault) return databaseFault(fault, error);
  return new DomainError('INTERNAL_SERVER_ERROR', 'Internal server error.', { cause: error });
}

/**
 * A request cut off by the database (connection lost, server restarting or read-only, a session
 * limit reached, no pooled connection free in time) is the service's trouble, not the caller's:
 * 503 with Retry-After. Whatever the request had begun was rolled back with its transaction; an
 * Idempotency-Key it held is released.
 */
function databaseFault(fault: DatabaseFault, cause: unknown): DomainError {
  // A full pool is this process at capacity, not the database gone: its own code, so neither the
  // partner nor an operator reads it as an outage.
  if (fault === 'pool-exhausted')
    return new DomainError(
      'BUSY',
      'The service is at capacity right now (no database connection came free in time). Retry shortly.',
      { retryAfter: 1, cause },
    );
  const message =
    fault === 'read-only'
      ? 'The service cannot record changes right now (its database is read-only). Retry shortly.'
      : fault === 'timeout'
        ? 'The service is busy and could not finish this request in time. Retry shortly.'
        : 'The service is temporarily unavailable (its database cannot be reached). Retry shortly.';
  return new DomainError('SERVICE_UNAVAILABLE', message, { retryAfter: 1, cause });
}

export function isInternal(error: DomainError): boolean {
  return error.code === 'INTERNAL_SERVER_ERROR';
}

/** `extensions` for a GraphQL error. */
export function graphQLExtensions(error: DomainError): Record<string, unknown> {
  const extensions: Record<string, unknown> = { code: error.code, http: { status: error.status } };
  if (error.field !== undefined) extensions.field = error.field;
  if (error.details !== undefined) extensions.details = error.details;
  if (error.retryAfter !== undefined) extensions.retryAfter = error.retryAfter;
  if (error.reference !== undefined) extensions.reference = error.reference;
  if (error.limit !== undefined) extensions.limit = error.limit;
  return extensions;
}

export interface RestErrorReply {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The REST v1 answer for an error: general, rate-limit or bill-not-found body. */
export function restErrorReply(error: DomainError): RestErrorReply {
  const status = error.status;
  if (status === 429) {
    const retryAfter = Math.max(1, Math.ceil(error.retryAfter ?? 1));
    const body: Record<string, unknown> = { statusCode: status, message: error.message, retryAfter };
    // A payout limit says which one (the rate-limit shape with the code and limit beside it).
    if (error.code !== 'RATE_LIMITED') Object.assign(body, { errorCode: error.code, limit: error.limit });
    return { status, headers: { 'retry-after': String(retryAfter) }, body };
  }
  if (error.code === 'BILL_NOT_FOUND') {
    return {
      status,
      headers: {},
      body: { success: false, message: error.message, errorCode: 'BILL_NOT_FOUND', reference: error.reference ?? '' },
    };
  }
  const body: Record<string, unknown> = { statusCode: status, message: error.message, error: statusName(status) };
  // An upstream that asked us to wait (a provider's 429) is passed on as Retry-After on the 503,
  // and BUSY always says when to come back.
  const headers: Record<string, string> =
    (error.code === 'SERVICE_UNAVAILABLE' || error.code === 'BUSY') && error.retryAfter !== undefined
      ? { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfter))) }
      : {};
  if (error.details?.length) body.details = error.details;
  else if (error.field !== undefined) body.details = [{ field: error.field, message: error.message }];
  // Codes a client branches on travel in the body too (the general shape has room for them).
  if (CODES_IN_BODY.has(error.code)) body.errorCode = error.code;
  if (error.limit !== undefined) body.limit = error.limit;
  return { status, headers, body };
}

const CODES_IN_BODY = new Set<ErrorCode>([
  'INSUFFICIENT_FUNDS',
  'IDEMPOTENCY_KEY_REUSED',
  'QUOTE_EXPIRED',
  'PRICE_MOVED',
  'PAYOUT_LIMIT_EXCEEDED',
  'IP_NOT_ALLOWED',
  'BUSY',
]);

function statusName(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/** Ranks errors so a REST reply reports the most fundamental one (401 before 403 before 400…). */
const PRECEDENCE: ErrorCode[] = [
  'INTERNAL_SERVER_ERROR',
  'SERVICE_UNAVAILABLE',
  'BUSY',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_BAD_ANSWER',
  'NOT_IN_FACADE',
  'UNAUTHENTICATED',
  'IP_NOT_ALLOWED',
  'ORIGIN_NOT_ALLOWED',
  'RATE_LIMITED',
  'FORBIDDEN',
];

export function mostSevere(errors: DomainError[]): DomainError {
  return [...errors].sort((a, b) => rank(a) - rank(b))[0]!;
}

function rank(error: DomainError): number {
  const index = PRECEDENCE.indexOf(error.code);
  return index === -1 ? PRECEDENCE.length : index;
}

/**
 * The one error type domain code throws. Its `code` decides the HTTP status, the GraphQL
 * `extensions.code` and the REST body, all in `errorStatus` and the mappers that call it.
 */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  | 'INSUFFICIENT_FUNDS'
  | 'QUOTE_EXPIRED'
  | 'PRICE_MOVED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BILL_NOT_FOUND'
  | 'CONFLICT'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'PAYOUT_LIMIT_EXCEEDED'
  | 'PAYOUT_VELOCITY_EXCEEDED'
  | 'IP_NOT_ALLOWED'
  | 'ORIGIN_NOT_ALLOWED'
  | 'SERVICE_UNAVAILABLE'
  | 'BUSY'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_BAD_ANSWER'
  | 'NOT_IN_FACADE'
  | 'UPSTREAM_BUDGET_EXCEEDED'
  | 'INTERNAL_SERVER_ERROR';

const STATUS: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 400,
  INSUFFICIENT_FUNDS: 400,
  QUOTE_EXPIRED: 400,
  PRICE_MOVED: 409,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BILL_NOT_FOUND: 404,
  CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  /** A payout over one of the key's amount limits: waiting does not help. */
  PAYOUT_LIMIT_EXCEEDED: 403,
  /** A payout over one of the key's limits per window: it frees as older payouts leave the window. */
  PAYOUT_VELOCITY_EXCEEDED: 429,
  IP_NOT_ALLOWED: 403,
  /** A Connect app's token sent from a browser origin the app has not registered. */
  ORIGIN_NOT_ALLOWED: 403,
  SERVICE_UNAVAILABLE: 503,
  /**
   * At capacity, nothing done: a provider's calls in flight at their limit (upstream/bulkhead.ts),
   * or no database connection free in time. Up, unlike SERVICE_UNAVAILABLE: retry after Retry-After.
   */
  BUSY: 503,
  /** Facade mode: the upstream REST v1 deployment could not be reached, or answered 5xx. */
  UPSTREAM_UNAVAILABLE: 502,
  /** Facade mode: the upstream did not answer within UPSTREAM_TIMEOUT_MS. */
  UPSTREAM_TIMEOUT: 504,
  /** Facade mode: the upstream answered 2xx with a body that is not the spec's shape. */
  UPSTREAM_BAD_ANSWER: 502,
  /** Facade mode: a field this gateway does not yet ask the upstream for (it never reads its own database instead). */
  NOT_IN_FACADE: 501,
  /** Facade mode: an operation that could make more upstream calls than UPSTREAM_CALL_BUDGET; nothing was sent. */
  UPSTREAM_BUDGET_EXCEEDED: 400,
  INTERNAL_SERVER_ERROR: 500,
};

export interface FieldProblem {
  field: string;
  message: string;
}

export interface DomainErrorOptions {
  /** The input field at fault, for BAD_USER_INPUT. */
  field?: string;
  details?: FieldProblem[];
  /** Seconds to wait, for RATE_LIMITED. */
  retryAfter?: number;
  /** The reference asked for, for BILL_NOT_FOUND. */
  reference?: string;
  /** The limit refused, for the payout limits: its name and value (kobo as a string, or a count). */
  limit?: LimitInfo;
  /** The OAuth scope that would allow the operation, for a FORBIDDEN that is a missing permission. */
  scope?: string;
  cause?: unknown;
}

export interface LimitInfo {
  name: string;
  value: string | number;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly field?: string;
  readonly details?: FieldProblem[];
  readonly retryAfter?: number;
  readonly reference?: string;
  readonly limit?: LimitInfo;
  readonly scope?: string;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    if (options.field !== undefined) this.field = options.field;
    if (options.details !== undefined) this.details = options.details;
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options.reference !== undefined) this.reference = options.reference;
    if (options.limit !== undefined) this.limit = options.limit;
    if (options.scope !== undefined) this.scope = options.scope;
  }

  get status(): number {
    return STATUS[this.code];
  }
}

export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} was not found.`);

export const badInput = (field: string, message: string) =>
  new DomainError('BAD_USER_INPUT', message, { field, details: [{ field, message }] });

/**
 * Every bad field of one input, so a refusal names them all at once rather than one per try.
 * With one problem the refusal is exactly `badInput`'s; with several, their messages in order.
 */
export class InputProblems {
  private readonly problems: FieldProblem[] = [];

  add(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  /**
   * Runs one field's parser. A BAD_USER_INPUT it throws is noted rather than thrown, so the other
   * fields are still checked; then the answer is undefined. Any other error is thrown as it is.
   */
  check<T>(parse: () => T): T | undefined {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'BAD_USER_INPUT') throw error;
      if (error.details?.length) this.problems.push(...error.details);
      else this.add(error.field ?? 'input', error.message);
      return undefined;
    }
  }

  /** Throws the one refusal naming every problem, if there is any. */
  throwIfAny(): void {
    const [first] = this.problems;
    if (!first) return;
    const message = this.problems.map((p) => p.message).join(' ');
    throw new DomainError('BAD_USER_INPUT', message, { field: first.field, details: [...this.problems] });
  }
}

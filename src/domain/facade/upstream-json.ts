import type { AnswerOf, AnswerShape } from '../upstream/answer-shape.js';
import { DomainError } from '../errors.js';
import type { Caller, CallerCredential } from '../users/user-directory.js';
import { parseJsonKeepingNumbers, stringifyKeepingNumbers } from './json-number-text.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { partnerOf } from './upstream-partner.js';
import { type Asked, statusOutcome, transportFault } from './upstream-outcomes.js';

/** Largest answer read by default: a record or a page of them. Past it, the answer is not the spec's. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** One spec request, asked with the caller's own credential. */
export interface JsonRequest {
  method: 'GET' | 'POST';
  /** Path and query, encoded. */
  path: string;
  credential: CallerCredential;
  /** Sent as JSON (a JsonNumberText as its digits). */
  body?: Record<string, unknown> | undefined;
  /** The caller's Idempotency-Key, forwarded as sent. */
  idempotencyKey?: string | undefined;
  /** What the request names, for the error codes that carry it (a reference). */
  asked?: Asked | undefined;
  maxAnswerBytes?: number | undefined;
}

/** A success answer in its documented shape, with the text of each of its numbers. */
export interface JsonAnswer<T> {
  value: T;
  /** The number's text at a JSON pointer, as the upstream wrote it (amounts are read from it, exactly). */
  numberText(pointer: string): string | undefined;
  /** The fault for a part the shape could not check (an amount with too many decimals), counted. */
  unreadable(pointer: string): Error;
}

/**
 * Sends one request to the upstream and reads its JSON: a refusal or an error body becomes its
 * code through the one outcome table (upstream-outcomes.ts); a 2xx not in `shape`, or not JSON,
 * is a `bad_answer` fault, counted. Sent once: nothing here retries, so a POST whose answer did
 * not come is never sent again.
 */
export async function askUpstream<S extends AnswerShape<unknown>>(
  upstream: RestV1Upstream,
  request: JsonRequest,
  shape: S,
): Promise<JsonAnswer<AnswerOf<S>>> {
  const { credential } = request;
  // Taken before anything else: a request past its deadline or budget sends nothing more.
  const timeoutMs = credential.allowance?.take();
  const payload = request.body === undefined ? undefined : Buffer.from(stringifyKeepingNumbers(request.body), 'utf8');
  const answer = await upstream.send({
    partner: partnerOf(credential),
    timeoutMs,
    method: request.method,
    path: request.path,
    headers: {
      accept: 'application/json',
      ...credentialHeader(request.credential),
      ...(request.credential.clientIp ? { 'x-forwarded-for': request.credential.clientIp } : {}),
      ...(payload ? { 'content-type': 'application/json' } : {}),
      ...(request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {}),
    },
    body: payload,
  });
  const text = await readText(answer.body, request.maxAnswerBytes ?? MAX_ANSWER_BYTES).catch((cause: unknown) => {
    throw upstream.fault(transportFault(cause, false), cause);
  });
  if (answer.status < 200 || answer.status > 299) {
    const outcome = statusOutcome(
      answer.status,
      header(answer.headers['retry-after']),
      jsonOrUndefined(text),
      request.asked,
    );
    throw typeof outcome === 'string' ? upstream.fault(outcome) : outcome;
  }
  let parsed: ReturnType<typeof parseJsonKeepingNumbers>;
  try {
    parsed = parseJsonKeepingNumbers(text ?? '');
  } catch {
    throw upstream.fault('bad_answer', undefined, '/');
  }
  const mismatch = shape.mismatchAt(parsed.value);
  if (mismatch !== undefined) throw upstream.fault('bad_answer', undefined, mismatch);
  return {
    value: parsed.value as AnswerOf<S>,
    numberText: parsed.numberText,
    unreadable: (pointer) => upstream.fault('bad_answer', undefined, pointer),
  };
}

/** The caller's credential, which every upstream request is asked with (the guards have required one). */
export function credentialOf({ credential }: Caller): CallerCredential {
  if (!credential) throw new DomainError('UNAUTHENTICATED', 'Authentication required.');
  return credential;
}

/** The credential forwarded in the header it came in. */
export function credentialHeader({ scheme, value }: CallerCredential): Record<string, string> {
  return scheme === 'bearer' ? { authorization: `Bearer ${value}` } : { 'x-api-key': value };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function jsonOrUndefined(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The body as text; undefined past `max` bytes (the rest is not read: it would only cost the facade). */
async function readText(body: AsyncIterable<Buffer>, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A request body of the spec's fields that the caller gave: each of `fields` the input holds (not
 * undefined, not null), under its own name, and nothing else of the input.
 */
export function bodyOf<T extends object>(input: T, fields: readonly (keyof T & string)[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const value = input[field];
    if (value !== undefined && value !== null) body[field] = value;
  }
  return body;
}

import { expect } from 'vitest';
import { toDomainError } from '../../src/domain/error-mapping.js';
import { UpstreamError } from '../../src/domain/upstream/upstream-error.js';

/**
 * A REST answer is the documented upstream fault for an answer not in its documented shape: 503
 * `{statusCode, message, error}`, the message naming the provider and the path of the first
 * mismatching field, and nothing of the answer itself (`absent`: values the spoiled answer held).
 */
export function expectShapeFault(
  response: { statusCode: number; body: string; json(): any },
  provider: string,
  path: string,
  absent: string[] = [],
): void {
  expect(response.statusCode, response.body).toBe(503);
  expect(response.json()).toEqual({
    statusCode: 503,
    error: 'Service Unavailable',
    message: `${provider} is unavailable (its answer does not have the documented shape at ${path}). Retry later.`,
  });
  for (const value of absent) expect(response.body).not.toContain(value);
}

/**
 * An adapter call rejected with the upstream fault for an answer not in its documented shape:
 * `kind` unavailable on a read, outcome_unknown on a call that may have moved money; never an error
 * the partner would see as a 500, and never the answer's values in its message.
 */
export async function expectShapeRejection(
  call: Promise<unknown>,
  path: string,
  kind: 'unavailable' | 'outcome_unknown' = 'unavailable',
  absent: string[] = [],
): Promise<UpstreamError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the call resolved').toBeInstanceOf(UpstreamError);
  const upstream = error as UpstreamError;
  expect({ kind: upstream.kind, mismatch: upstream.mismatch, status: toDomainError(upstream).status }).toEqual({
    kind,
    mismatch: path,
    status: 503,
  });
  expect(upstream.message).toContain(`documented shape at ${path}`);
  for (const value of absent) expect(upstream.message).not.toContain(value);
  return upstream;
}

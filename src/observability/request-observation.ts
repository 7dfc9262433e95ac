import type { Context, Span } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';

/**
 * What one HTTP request learns about itself on its way through, for its log line, its metrics and
 * its span: who called (credential id, never the key) and which GraphQL operation ran.
 */
export interface RequestObservation {
  credentialId?: string;
  /** How the caller authenticated: the request log keeps API keys' requests only. */
  credentialKind?: string;
  operation?: string;
  traceId?: string;
  span?: Span;
  context?: Context;
}

/**
 * Kept on the request (and on its GraphQL context) under a symbol of this module: a property read
 * costs a fraction of a WeakMap lookup, and every request reads it several times.
 */
const OBSERVATION = Symbol('requestObservation');
type Carrier = { [OBSERVATION]?: RequestObservation };

export function observationOf(request: FastifyRequest): RequestObservation {
  const carrier = request as FastifyRequest & Carrier;
  let found = carrier[OBSERVATION];
  if (!found) {
    found = {};
    carrier[OBSERVATION] = found;
  }
  return found;
}

/** Ties a GraphQL context to its request, and notes the credential the context authenticated. */
export function linkContext<C extends { principal: { credentialId: string; kind: string } | null }>(
  contextValue: C,
  request: FastifyRequest,
): C {
  const observation = observationOf(request);
  if (contextValue.principal) {
    observation.credentialId = contextValue.principal.credentialId;
    observation.credentialKind = contextValue.principal.kind;
  }
  (contextValue as C & Carrier)[OBSERVATION] = observation;
  return contextValue;
}

export function observationOfContext(contextValue: object): RequestObservation | undefined {
  return (contextValue as Carrier)[OBSERVATION];
}

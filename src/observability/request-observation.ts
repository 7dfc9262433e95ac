import type { Context, Span } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';

/**
 * What one HTTP request learns about itself on its way through, for its log line, its metrics and
 * its span: who called (credential id, never the key) and which GraphQL operation ran.
 */
export interface RequestObservation {
  credentialId?: string;
  operation?: string;
  traceId?: string;
  span?: Span;
  context?: Context;
}

const byRequest = new WeakMap<FastifyRequest, RequestObservation>();
/** GraphQL contexts (built per request) point back at their request's observation. */
const byContext = new WeakMap<object, RequestObservation>();

export function observationOf(request: FastifyRequest): RequestObservation {
  let found = byRequest.get(request);
  if (!found) {
    found = {};
    byRequest.set(request, found);
  }
  return found;
}

/** Ties a GraphQL context to its request, and notes the credential the context authenticated. */
export function linkContext<C extends { principal: { credentialId: string } | null }>(
  contextValue: C,
  request: FastifyRequest,
): C {
  const observation = observationOf(request);
  if (contextValue.principal) observation.credentialId = contextValue.principal.credentialId;
  byContext.set(contextValue, observation);
  return contextValue;
}

export function observationOfContext(contextValue: object): RequestObservation | undefined {
  return byContext.get(contextValue);
}

import type { TSchema } from '@sinclair/typebox';
import type { FieldParsers } from '../domain/field-checks.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

/**
 * One REST v1 path: which GraphQL operation it runs and how HTTP maps onto it. No business logic
 * lives here; the operation's resolvers do the work, with the same auth and errors as /graphql.
 */
export interface RestRoute {
  method: HttpMethod;
  /** Fastify path syntax, e.g. /api/v1/users/:id. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /**
   * OpenAPI's operationId, which SDK generators name methods and types after. Default: the GraphQL
   * operation's name in lowerCamelCase (`query BillRecords` → `billRecords`); set where several
   * routes run one operation. Stable: clients/ is generated from it, so a change shows in review.
   */
  operationId?: string;
  /** A GraphQL document with exactly one operation. */
  operation: string;
  /** Variables from path, query and body. Default: path params, then query string. */
  variables?: (input: RouteInput) => Record<string, unknown>;
  /** The payload from the operation's data. Default: the value of its first root field. */
  result?: (data: Record<string, unknown>) => unknown;
  /** The envelope's `message`. */
  message: string;
  /** Default: 201 for POST, 200 otherwise (NestJS habits). */
  status?: number;
  /** False for the few seed responses that are not wrapped in the envelope. */
  envelope?: boolean;
  /** Renders the payload as an HTML page instead of JSON (printable receipts). */
  html?: (payload: unknown) => string;
  /** Answers as a CSV download (text/csv) instead of JSON: the body and any extra headers. */
  csv?: (payload: unknown) => { body: string; filename: string; headers?: Record<string, string> };
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /**
   * The operation's own rules for its body fields (a decimal too fine for kobo, a NUBAN account
   * number, a reserved reference): the same parsers the service runs. When the body's schema
   * refuses some fields, these run on the rest, so one 400 names every bad field.
   */
  fieldChecks?: (body: never) => FieldParsers;
  /** Largest body in bytes; default REST_BODY_LIMIT_BYTES. */
  bodyLimit?: number;
  /** The schema of the payload (the envelope's `data`, or the whole body when unwrapped). */
  response: TSchema;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A REST route's `fieldChecks`, read when its body's schema refuses the body. */
    fieldChecks?: (body: unknown) => FieldParsers;
  }
}

export const defineRoutes = (routes: RestRoute[]): RestRoute[] => routes;

/** The route's OpenAPI operationId: its own, or its GraphQL operation's name in lowerCamelCase. */
export function operationIdOf(route: RestRoute): string {
  if (route.operationId) return route.operationId;
  const name = /^\s*(?:query|mutation)\s+(\w+)/.exec(route.operation)?.[1];
  if (!name)
    throw new Error(`${route.method} ${route.path}: the route's operation has no name to make an operationId of.`);
  return name[0]!.toLowerCase() + name.slice(1);
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import {
  type DocumentNode,
  type ExecutionResult,
  type GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  validate,
} from 'graphql';
import { LEVEL_LABELS, levelsGranting, PERMISSION_LEVELS } from '../domain/auth/permissions.js';
import { scopeGranting } from '../domain/connect/scopes.js';
import { mostSevere, toDomainError } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';
import type { FieldParsers } from '../domain/field-checks.js';
import type { GraphQLContext } from '../graphql/context.js';
import { type AccessRule, accessRuleOf, checkAccess } from '../graphql/directives/auth.js';
import { VALUE_MOVING_MUTATIONS } from '../graphql/value-moving.js';
import type { TSchema } from '@sinclair/typebox';
import { restInputErrors } from './graphql-input-errors.js';
import { nullOptionalsDropper } from './optional-fields.js';
import { lazySerializer } from './response-serializer.js';
import type { RestRoute, RouteInput } from './route.js';
import { Envelope, GeneralError, RateLimitError } from './schemas.js';

export interface CompiledRoute extends RestRoute {
  document: DocumentNode;
  /** The operation compiled to a JS function (graphql-jit): several times cheaper than graphql-js per call. */
  run: (context: GraphQLContext, variables: Record<string, unknown>) => Promise<ExecutionResult> | ExecutionResult;
  /** The executor's errors as one REST error: input refusals in REST words, the rest as mapped. */
  errorOf: (errors: readonly GraphQLError[]) => DomainError;
  /** The access rules of the operation's root fields; the route needs all of them. */
  access: AccessRule[];
  rootField: string;
  /** The operation moves money or tokens: the route takes an Idempotency-Key header. */
  movesValue: boolean;
}

/**
 * Parses every route's operation and reads its access rules at start-up, and validates it against
 * the schema either now (`eager`, the default: a route whose operation does not validate throws,
 * naming the route) or on the route's first call (`firstCall`, what the server does: validating
 * about a hundred operations in code that runs once, so cold, was about 0.17 s of a warm start).
 * test/rest/route-table.test.ts validates every route eagerly, so a release whose route would not
 * validate does not pass its tests; at a first call such a route would answer 500 and log why.
 */
export function compileRoutes(
  schema: GraphQLSchema,
  routes: RestRoute[],
  {
    validate = 'eager',
    unservable,
  }: {
    validate?: 'eager' | 'firstCall';
    /**
     * A schema that serves part of the graph (facade mode): a route whose operation does not
     * validate against it answers this error, without running or checking anything.
     */
    unservable?: (route: string) => Error;
  } = {},
): CompiledRoute[] {
  return routes.map((route) => {
    const where = `${route.method} ${route.path}`;
    const document = parse(route.operation);
    const operations = document.definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    );
    if (operations.length !== 1) throw new Error(`${where}: the route's document must hold exactly one operation.`);
    if (unservable && validationErrorsOf(schema, document).length > 0)
      return refusedRoute(route, document, unservable(where));
    if (validate === 'eager') validated(schema, document, where);
    const operation = operations[0]!;
    const rootType = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const selections = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD);
    const access = selections.map((s) => accessRuleOf(rootType!.getFields()[s.name.value]!)!);
    // Compiled on the route's first call: compiling every route was a large part of start-up, and
    // a document that validated above compiles.
    let compiled: ReturnType<typeof compileOperation> | undefined;
    const run = (context: GraphQLContext, variables: Record<string, unknown>) => {
      compiled ??= compileOperation(
        schema,
        validate === 'eager' ? document : validated(schema, document, where),
        where,
      );
      return compiled.query(undefined, context, variables);
    };
    const movesValue =
      operation.operation === 'mutation' && selections.some((s) => VALUE_MOVING_MUTATIONS.has(s.name.value));
    // The variables' refusals together name every bad field; any other error outranks them.
    const errorOf = (errors: readonly GraphQLError[]) => {
      const input = errors.filter(isVariableError);
      const others = errors.filter((e) => !isVariableError(e)).map(toDomainError);
      return mostSevere(input.length > 0 ? [...others, restInputErrors(input, schema)] : others);
    };
    return {
      ...route,
      ...(route.params ? { params: closed(route.params) } : {}),
      ...(route.querystring ? { querystring: closed(route.querystring) } : {}),
      ...(route.body ? { body: closed(route.body) } : {}),
      document,
      run,
      errorOf,
      access,
      rootField: selections[0]!.alias?.value ?? selections[0]!.name.value,
      movesValue,
    };
  });
}

/** A route its schema cannot serve: every call answers `error`. */
function refusedRoute(route: RestRoute, document: DocumentNode, error: Error): CompiledRoute {
  return {
    ...route,
    document,
    run: () => {
      throw error;
    },
    errorOf: () => (error instanceof DomainError ? error : new DomainError('INTERNAL_SERVER_ERROR', error.message)),
    access: [],
    rootField: '',
    movesValue: false,
  };
}

const validationErrorsOf = (schema: GraphQLSchema, document: DocumentNode) => validate(schema, document);

function validated(schema: GraphQLSchema, document: DocumentNode, where: string): DocumentNode {
  const errors = validationErrorsOf(schema, document);
  if (errors.length > 0)
    throw new Error(`${where}: operation does not validate: ${errors.map((e) => e.message).join('; ')}`);
  return document;
}

function compileOperation(schema: GraphQLSchema, document: DocumentNode, where: string) {
  const compiled = compileQuery(schema, document);
  if (!isCompiledQuery(compiled))
    throw new Error(`${where}: operation does not compile: ${compiled.errors?.map((e) => e.message).join('; ')}`);
  return compiled;
}

/** An error of the executor about the variables themselves (no field ran), not a resolver's. */
const isVariableError = (error: GraphQLError) => !error.path && !(error.originalError instanceof DomainError);

/**
 * The schema with every object that does not say otherwise closed to unknown properties, so an
 * unknown field or query parameter is a 400 naming it (GraphQL input types are closed too).
 */
function closed<T extends TSchema>(schema: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const copy: Record<string | symbol, unknown> = {};
    for (const key of Reflect.ownKeys(node)) copy[key] = visit((node as Record<string | symbol, unknown>)[key]);
    if (copy.type === 'object' && copy.properties && copy.additionalProperties === undefined)
      copy.additionalProperties = false;
    return copy;
  };
  return visit(schema) as T;
}

function accessDescription(access: AccessRule[]): string {
  const abilities = [...new Set(access.flatMap((a) => (a.public ? [] : [a.ability])))];
  if (abilities.length === 0) return 'Needs no credential.';
  const levels = PERMISSION_LEVELS.filter((level) =>
    abilities.every((ability) => levelsGranting(ability).includes(level)),
  );
  return `Needs an API key or access token with permission: ${levels.map((l) => LEVEL_LABELS[l]).join(', ')}.`;
}

// Error responses are documented, not used to serialize: `additionalProperties` keeps every field, and
// nothing is required, so the seed's other bodies (bill not found) pass the serializer unchanged.
const openError = (schema: typeof GeneralError | typeof RateLimitError) => ({
  ...schema,
  $id: undefined,
  required: undefined,
  additionalProperties: true,
});

/**
 * The header every value-moving route takes, declared so OpenAPI lists it. It never fails
 * validation here: the idempotency service answers a bad key with the API's own error body.
 */
const IDEMPOTENCY_HEADERS = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description:
        "At most 255 characters, unique per request you mean once (a UUID, say). A retry with the same key and body replays the first answer; another body is 422; while the first still runs, 409. Keys are scoped to the credential's owner, environment and operation.",
    },
  },
} as const;

export interface RestEngineOptions {
  routes: CompiledRoute[];
  contextFor: (request: FastifyRequest) => Promise<GraphQLContext>;
  /** Ties a built context to its request (observation), in the step that receives it. Default: none. */
  linkContext?: (context: GraphQLContext, request: FastifyRequest) => GraphQLContext;
  /** Body limit of routes that do not set their own. */
  bodyLimit: number;
}

const isPromise = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as Promise<T> | undefined)?.then === 'function';

/** Sends a route's answer; an answer Fastify cannot send (serialization) is sent as the error. */
function send(reply: FastifyReply, payload: unknown): void {
  if (reply.sent) return;
  try {
    reply.send(payload);
  } catch (error) {
    fail(reply, error);
  }
}

/**
 * Sends a route's error through the error handler. One that comes after the reply was already sent
 * (by a hook or a timeout, say) is logged rather than lost, with the request's id and the error
 * made safe by the logger's serializers; Fastify does the same for the handlers it awaits.
 */
function fail(reply: FastifyReply, error: unknown): void {
  if (reply.sent) {
    reply.log.error({ err: error }, 'REST route failed after its reply was sent');
    return;
  }
  try {
    reply.send(error);
  } catch (failure) {
    reply.log.error({ err: failure }, 'REST route error could not be sent');
  }
}

/** Where a request's GraphQL context waits between its access check and its handler. */
const CONTEXT = Symbol('restContext');
type WithContext = FastifyRequest & { [CONTEXT]?: GraphQLContext };

/** Registers each route: validate input, run its operation in-process, answer in the envelope. */
export function registerRestRoutes(
  app: FastifyInstance,
  { routes, contextFor, linkContext = (context) => context, bodyLimit }: RestEngineOptions,
): void {
  for (const route of routes) {
    const status = route.status ?? (route.method === 'POST' ? 201 : 200);
    const isPublic = route.access.every((a) => a.public);
    const variablesOf = route.variables ?? ((input: RouteInput) => ({ ...input.query, ...input.params }));
    const dropNullOptionals = nullOptionalsDropper(route.response);
    // Written as promise chains, not async functions: each async function and each `await` is a
    // promise more per request (two while an async-local store is in use), for the same order of work.
    const accessChecked = (context: GraphQLContext): GraphQLContext | Promise<GraphQLContext> => {
      let pending: Promise<void> | undefined;
      for (const rule of route.access)
        pending = pending ? pending.then(() => checkAccess(context, rule)) : checkAccess(context, rule);
      return pending ? pending.then(() => context) : context;
    };
    // Each step below hands its result straight to the next and sends the answer itself: a promise
    // returned from a `then` callback, or awaited, costs more promises and turns per request.
    /** Runs the operation and sends its answer or its error. */
    const execute = (request: FastifyRequest, reply: FastifyReply, contextValue: GraphQLContext): void => {
      let result: ReturnType<CompiledRoute['run']>;
      try {
        const input: RouteInput = {
          params: (request.params ?? {}) as Record<string, unknown>,
          query: (request.query ?? {}) as Record<string, unknown>,
          body: request.body,
        };
        result = route.run(contextValue, variablesOf(input));
      } catch (error) {
        return fail(reply, error);
      }
      if (isPromise(result))
        result.then(
          (done) => finish(reply, done),
          (error: unknown) => fail(reply, error),
        );
      else finish(reply, result);
    };
    const finish = (reply: FastifyReply, result: ExecutionResult): void => {
      let payload: unknown;
      try {
        payload = answer(result, reply);
      } catch (error) {
        return fail(reply, error);
      }
      send(reply, payload);
    };
    /** Ties the context to the request, checks the route's access rules, then runs it; a refusal is sent as the error. */
    const admit = (request: FastifyRequest, reply: FastifyReply, contextValue: GraphQLContext): void => {
      let checked: GraphQLContext | Promise<GraphQLContext>;
      try {
        checked = accessChecked(linkContext(contextValue, request));
      } catch (error) {
        return fail(reply, error);
      }
      if (isPromise(checked))
        checked.then(
          (admitted) => execute(request, reply, admitted),
          (error: unknown) => fail(reply, error),
        );
      else execute(request, reply, checked);
    };
    const answer = (result: ExecutionResult, reply: FastifyReply): unknown => {
      if (result.errors?.length) throw route.errorOf(result.errors);
      const data = (result.data ?? {}) as Record<string, unknown>;
      const payload = route.result ? route.result(data) : data[route.rootField];
      dropNullOptionals?.(payload);
      reply.code(status);
      if (route.html) {
        // A page of the payload's own text: nothing to load, nothing to frame.
        reply.type('text/html; charset=utf-8').headers({
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
          'x-content-type-options': 'nosniff',
        });
        return route.html(payload);
      }
      if (route.csv) {
        const file = route.csv(payload);
        reply
          .type('text/csv; charset=utf-8')
          .headers({ 'content-disposition': `attachment; filename="${file.filename}"`, ...file.headers });
        return file.body;
      }
      return route.envelope === false
        ? payload
        : { statusCode: status, message: route.message, data: payload, errors: {} };
    };
    // A route without input to validate checks access at the start of its handler: nothing runs
    // between the two (no validation, and the preHandler hooks only restore the trace context),
    // so the answers are the same, without a hook and its promise per request.
    const validatesInput = Boolean(route.params || route.querystring || route.body || route.movesValue);
    app.route({
      method: route.method,
      url: route.path,
      bodyLimit: route.bodyLimit ?? bodyLimit,
      serializerCompiler: lazySerializer,
      ...(route.fieldChecks ? { config: { fieldChecks: route.fieldChecks as (body: unknown) => FieldParsers } } : {}),
      schema: {
        summary: route.summary,
        description: [route.description, accessDescription(route.access)].filter(Boolean).join('\n\n'),
        tags: [route.tag],
        ...(route.params ? { params: route.params } : {}),
        ...(route.querystring ? { querystring: route.querystring } : {}),
        ...(route.body ? { body: route.body } : {}),
        ...(route.movesValue ? { headers: IDEMPOTENCY_HEADERS } : {}),
        security: isPublic
          ? []
          : [
              { ApiKey: [] },
              { Bearer: [] },
              { Connect: [...new Set(route.access.flatMap((a) => (a.public ? [] : [scopeGranting(a.ability)])))] },
            ],
        response: {
          [status]: route.html
            ? { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } }
            : route.csv
              ? { description: 'A CSV file (RFC 4180).', content: { 'text/csv': { schema: { type: 'string' } } } }
              : route.envelope === false
                ? route.response
                : Envelope(route.response),
          ...(isPublic ? {} : { 401: openError(GeneralError), 403: openError(GeneralError) }),
          400: openError(GeneralError),
          404: openError(GeneralError),
          429: openError(RateLimitError),
          500: openError(GeneralError),
        },
      },
      // Credentials are checked before the input is, so a caller without a valid key learns
      // nothing about the route's input rules (401/403 come before 400).
      ...(validatesInput
        ? {
            preValidation: (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
              const admitted = (contextValue: GraphQLContext) => {
                (request as WithContext)[CONTEXT] = contextValue;
                done();
              };
              contextFor(request).then((contextValue) => {
                let checked: GraphQLContext | Promise<GraphQLContext>;
                try {
                  checked = accessChecked(linkContext(contextValue, request));
                } catch (error) {
                  return done(error as Error);
                }
                if (isPromise(checked)) checked.then(admitted, done);
                else admitted(checked);
              }, done);
            },
          }
        : {}),
      handler: (request, reply) => {
        if (validatesInput) execute(request, reply, (request as WithContext)[CONTEXT]!);
        else
          contextFor(request).then(
            (contextValue) => admit(request, reply, contextValue),
            (error: unknown) => fail(reply, error),
          );
      },
    });
  }
}

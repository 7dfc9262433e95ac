import {
  ApolloServer,
  type ApolloServerPlugin,
  type GraphQLRequestContextDidEncounterErrors,
  type GraphQLRequestContextDidResolveOperation,
  type GraphQLRequestContextValidationDidStart,
  type GraphQLRequestContextWillSendResponse,
  type GraphQLRequestListener,
} from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin, fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import type { GraphQLContext } from './context.js';
import { registerExplorer, wantsExplorer } from './explorer.js';
import { createFormatError } from './format-error.js';
import { createArmor, parseOptionsOf, validationRulesOf } from './hardening.js';
import { countQueryLimits } from './directives/operation-limits.js';
import { operationRefusal } from './operation-guards.js';
import { credentialLimitRefusal } from './credential-limits.js';
import { documentIdAsPersistedQuery, trustedDocumentOf } from './trusted-document-gate.js';
import { normalizedDocumentHash } from '../domain/graphql-access/document-hash.js';
import { upstreamBudgetRefusal } from './upstream-call-budget.js';
import { valueMovingRefusal } from './value-moving.js';
import { registerPages } from '../http/security-headers.js';
import { OperationObservation } from '../observability/graphql-plugin.js';

export interface ApolloOptions {
  schema: GraphQLSchema;
  config: Config;
  contextFor: (request: FastifyRequest) => Promise<GraphQLContext>;
}

/**
 * Apollo Server at /graphql, sharing the context builder with REST and WebSocket. A browser that
 * GETs /graphql gets the offline explorer (when enabled); any other GET is a GraphQL query.
 */
export async function registerApollo(
  app: FastifyInstance,
  { schema, config, contextFor }: ApolloOptions,
): Promise<void> {
  // Asked for, never implied by NODE_ENV: a partner developing against a local gateway reads
  // errors as production will send them.
  const stackTraces = config.GRAPHQL_STACK_TRACES;
  const armor = createArmor(config);
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    plugins: [
      requestPlugin(app, schema, armor.plugins as ApolloServerPlugin<GraphQLContext>[], !config.GRAPHQL_INTROSPECTION),
      // Inline tracing is for Apollo's hosted studio, which this deployment does not report to;
      // the landing page loads from a CDN, so the explorer below replaces it.
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginLandingPageDisabled(),
      // The schema declares no @cacheControl hints, so responses never carried a Cache-Control
      // header from it; the plugin only wrapped every field's resolver to compute a policy of none.
      ApolloServerPluginCacheControlDisabled(),
    ],
    validationRules: validationRulesOf(config, armor),
    // The token limit is enforced by graphql-js's own parser, so a document over it is a parse
    // error like any other: HTTP 400 GRAPHQL_PARSE_FAILED.
    parseOptions: parseOptionsOf(config),
    formatError: createFormatError(
      stackTraces,
      (error) => app.log.error({ err: error }, 'unhandled GraphQL error'),
      !config.GRAPHQL_INTROSPECTION,
    ),
    includeStacktraceInErrorResponses: stackTraces,
    // Introspection, when GRAPHQL_INTROSPECTION is off, is refused by the gateway's own rule
    // (validationRulesOf): Apollo's told partners to "pass introspection: true to ApolloServer".
    introspection: true,
    // Done by the request plugin when introspection is off (withoutSuggestions): Apollo's own
    // plugin for it cost every request a listener.
    hideSchemaDetailsFromClientErrors: false,
    csrfPrevention: true,
    allowBatchedHttpRequests: config.GRAPHQL_BATCHING,
    // Shutdown is main.ts's: Apollo's own SIGTERM handler would close the listener at once,
    // before readiness has turned and in-flight requests have finished.
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  // contextFor ties the context to its request's observation (linkContext), which Apollo's copy keeps.
  const context = contextFor;
  const handler = fastifyApolloHandler(apollo, { context });
  app.route({
    method: ['POST', 'OPTIONS'],
    url: '/graphql',
    handler(request, reply) {
      documentIdAsPersistedQuery(request.body);
      return handler.call(this, request as never, reply as never);
    },
  });

  const queryOverGet = fastifyApolloHandler(apollo, { context });
  if (config.GRAPHQL_EXPLORER) await registerPages(app, registerExplorer);
  app.get('/graphql', { schema: { hide: true } }, (request, reply) => {
    if (config.GRAPHQL_EXPLORER && wantsExplorer(request)) return reply.redirect('/graphql/explorer/');
    return queryOverGet.call(app, request as never, reply as never);
  });
}

/**
 * Everything the gateway does around an operation, in one plugin (each plugin costs Apollo a
 * listener and a promise per hook per request):
 * - observation: metrics, the operation's name on the log line, a span when tracing is on;
 * - for a credential that runs trusted documents only, before Apollo reads the document: one of its
 *   registered documents, by text or hash, or a 403 (trusted-document-gate.ts);
 * - before anything executes: refused text and subscriptions over HTTP (operation-guards.ts),
 *   then two value-moving fields under one Idempotency-Key (value-moving.ts), then the
 *   credential's own cost and depth limits (credential-limits.ts), then in facade mode the
 *   operation's worst case of upstream calls (upstream-call-budget.ts);
 * - a query's root fields are counted against the rate limits at once (operation-limits.ts);
 * - graphql-armor's own hooks (field-suggestion masking) run only when there are errors to mask.
 */
const DONE: Promise<void> = Promise.resolve();
/** What a request refused by the trusted-documents gate goes on as (see requestDidStart): never executed. */
const STAND_IN = 'query RefusedDocument { __typename }';
const NO_RESPONSE: Promise<null> = Promise.resolve(null);

/**
 * The request plugin also carries the Fastify drain (its only hook is at start) rather than adding
 * a second plugin: Apollo asks every plugin for a request listener on every request, a slot of a
 * Promise.all (two promises) each, hooks or not.
 */
function requestPlugin(
  app: FastifyInstance,
  schema: GraphQLSchema,
  armorPlugins: ApolloServerPlugin<GraphQLContext>[],
  hideSuggestions: boolean,
): ApolloServerPlugin<GraphQLContext> {
  return {
    ...fastifyApolloDrainPlugin(app),
    requestDidStart({ contextValue, request }) {
      const listener = new OperationListener(schema, armorPlugins, contextValue, hideSuggestions);
      const access = contextValue.principal?.graphql;
      if (!access?.trustedDocumentsOnly) return Promise.resolve(listener);
      // Before Apollo reads the document (its persisted-query cache included): a credential that
      // runs trusted documents only runs one of its own, by text or by hash, or nothing (HTTP 403).
      return contextValue.services.graphqlAccess.documentsOf(access.owner).then((set) => {
        const admitted = trustedDocumentOf(set, request);
        if (admitted instanceof GraphQLError) {
          // Apollo answers what a hook throws from didResolveOperation on (a throw here is a 500),
          // so a refused request goes on as a stand-in that never executes, refused there: nothing
          // it sent is looked up, parsed or validated.
          listener.refusal = admitted;
          request.query = STAND_IN;
          request.operationName = undefined;
          request.extensions = undefined;
          return listener;
        }
        request.query = admitted;
        const persisted = request.extensions?.persistedQuery;
        if (persisted) persisted.sha256Hash = normalizedDocumentHash(persisted.sha256Hash) ?? persisted.sha256Hash;
        return listener;
      });
    },
  };
}

/**
 * Apollo's hideSchemaDetailsFromClientErrors, done here: its own plugin (ApolloServerPluginDisableSuggestions)
 * added a listener to every request, and so an async hook (a promise) or an empty slot at each of
 * Apollo's hook points, to strip "Did you mean …?" from the few documents that fail validation. The
 * same edit of the same messages, at the same point (the end of validation).
 */
function withoutSuggestions(validationErrors?: readonly Error[]): Promise<void> {
  for (const error of validationErrors ?? []) error.message = error.message.replace(/ ?Did you mean(.+?)\?$/, '');
  return DONE;
}
const WITHOUT_SUGGESTIONS = Promise.resolve(withoutSuggestions);

/**
 * One request's hooks, as methods of one object (Apollo calls them as methods): an object of six
 * closures was allocated per request. They are plain methods where nothing is awaited, answering
 * one settled promise: Apollo awaits whatever they return, and an async function costs a promise
 * (and, with an async-local store in the process, a copy of it) per hook per request.
 */
class OperationListener implements GraphQLRequestListener<GraphQLContext> {
  private readonly observed: OperationObservation;
  /** The trusted-documents gate's refusal, answered once Apollo lets a hook answer (didResolveOperation). */
  refusal: GraphQLError | undefined = undefined;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly armorPlugins: ApolloServerPlugin<GraphQLContext>[],
    contextValue: GraphQLContext,
    private readonly hideSuggestions: boolean,
  ) {
    this.observed = new OperationObservation(contextValue);
  }

  // Nothing to do in these two; answered with a settled promise so that Apollo awaits it rather
  // than making one (and paying its hook) for an absent hook's undefined.
  didResolveSource(): Promise<void> {
    return DONE;
  }

  responseForOperation(): Promise<null> {
    return NO_RESPONSE;
  }

  validationDidStart({
    document,
    request,
  }: GraphQLRequestContextValidationDidStart<GraphQLContext>): Promise<void | typeof withoutSuggestions> {
    this.observed.validating(document, request.operationName);
    return this.hideSuggestions ? WITHOUT_SUGGESTIONS : DONE;
  }

  didResolveOperation({
    document,
    request,
    operation,
    operationName,
    contextValue,
  }: GraphQLRequestContextDidResolveOperation<GraphQLContext>): Promise<void> {
    this.observed.resolved(operationName, operation);
    if (this.refusal) return Promise.reject(this.refusal);
    const access = contextValue.principal?.graphql;
    const refused =
      operationRefusal(document, request, operation) ??
      valueMovingRefusal(contextValue, operation, document) ??
      (access ? credentialLimitRefusal(this.schema, document, access) : undefined);
    if (refused) return Promise.reject(refused);
    if (!operation) return DONE;
    // A facade's: the operation's worst case of upstream calls is admitted before anything runs.
    const admitted = upstreamBudgetRefusal(this.schema, contextValue, document, operation);
    if (admitted)
      return admitted.then(() => countQueryLimits(this.schema, contextValue, document, operation, request.variables));
    return countQueryLimits(this.schema, contextValue, document, operation, request.variables) ?? DONE;
  }

  executionDidStart(): Promise<void> {
    this.observed.executing();
    return DONE;
  }

  async didEncounterErrors(requestContext: GraphQLRequestContextDidEncounterErrors<GraphQLContext>): Promise<void> {
    for (const plugin of this.armorPlugins) {
      const listener = await plugin.requestDidStart?.(requestContext as never);
      await listener?.didEncounterErrors?.(requestContext);
    }
  }

  willSendResponse(requestContext: GraphQLRequestContextWillSendResponse<GraphQLContext>): Promise<void> {
    this.observed.finished(requestContext);
    return DONE;
  }
}

import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { registerPages } from '../http/security-headers.js';
import { registerDocsUi } from './docs-ui.js';
import { API_VERSION } from '../graphql/resolvers/api-info.js';
import { SCOPE_NAMES, SCOPES } from '../domain/connect/scopes.js';
import { finishDocument, type RecordedExamples } from './openapi-document.js';
import type { RestRoute } from './route.js';

/**
 * OpenAPI 3.1 built from the REST route table's schemas (only /api/v1 paths) and finished for SDK
 * generators (openapi-document.ts), served as JSON, and a Swagger UI page whose assets ship inside
 * the package, so it works without internet. Built on the first request for it, with the recorded
 * examples loaded then: a start does not pay for either.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  { routes, serverUrl }: { routes: RestRoute[]; serverUrl: string },
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Partner Gateway REST API',
        version: API_VERSION,
        description:
          'Every REST v1 path runs a GraphQL operation of the same gateway (POST /graphql). Successful responses use the envelope ' +
          '{statusCode, message, data, errors}; errors use {statusCode, message, error}, the rate-limit body {statusCode, message, retryAfter} ' +
          'or, for bill lookups, {success:false, message, errorCode:"BILL_NOT_FOUND", reference}.',
      },
      components: {
        securitySchemes: {
          ApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-KEY',
            description: 'An API key; header name in any letter case.',
          },
          Bearer: { type: 'http', scheme: 'bearer', description: 'An API key or an OAuth access token.' },
          Connect: {
            type: 'oauth2',
            description:
              'Access tokens from Connect (authorization code with PKCE S256). Each scope grants the abilities of a key permission level.',
            flows: {
              authorizationCode: {
                authorizationUrl: '/connect/authorize',
                tokenUrl: '/connect/token',
                refreshUrl: '/connect/token',
                scopes: Object.fromEntries(SCOPE_NAMES.map((s) => [s, SCOPES[s].description])),
              },
            },
          },
        },
      },
    },
    transform: ({ schema, url, route }) => ({
      schema: url.startsWith('/api/v1') && !url.startsWith('/api/v1/docs') ? schema : { ...schema, hide: true },
      url,
      route,
    }),
  });
  let finished: Promise<unknown> | undefined;
  const document = () =>
    (finished ??= import('./openapi-examples.json', { with: { type: 'json' } }).then(
      ({ default: examples }) =>
        finishDocument(app.swagger() as Record<string, unknown>, {
          routes,
          serverUrl,
          examples: examples as RecordedExamples,
        }),
      (error: unknown) => {
        finished = undefined; // the next request tries again
        throw error;
      },
    ));
  await registerPages(app, (scope) => registerDocsUi(scope, '/api/v1/docs', document));
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, document);
}

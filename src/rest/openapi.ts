import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { registerPages } from '../http/security-headers.js';
import { registerDocsUi } from './docs-ui.js';
import { API_VERSION } from '../graphql/resolvers/api-info.js';
import { SCOPE_NAMES, SCOPES } from '../domain/connect/scopes.js';

/**
 * OpenAPI 3.1 built from the REST route table's schemas (only /api/v1 paths), served as JSON,
 * and a Swagger UI page whose assets ship inside the package, so it works without internet.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
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
  await registerPages(app, (scope) => registerDocsUi(scope, '/api/v1/docs', () => app.swagger()));
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';

export const rootRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1',
    tag: 'Service',
    summary: 'Root of the versioned API',
    description: 'Service name, API version and links to the documentation and the GraphQL endpoint.',
    operation: 'query ApiInfo { apiInfo { service version graphqlUrl restDocsUrl openApiUrl } }',
    message: 'Partner Gateway API v1',
    response: Type.Object(
      {
        service: Type.String(),
        version: Type.String({ examples: ['1.0'] }),
        graphqlUrl: Type.String(),
        restDocsUrl: Type.String(),
        openApiUrl: Type.String(),
      },
      { title: 'ApiInfo' },
    ),
  },
]);

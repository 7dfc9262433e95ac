import { Type } from '@sinclair/typebox';
import { defineRoutes, type RestRoute } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

const ACCESS_FIELDS =
  'kind id trustedDocumentsOnly maxComplexity maxDepth allowedOrigins trustedDocuments { id sha256Hash operationName body createdAt }';

const GraphQLAccessSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('API_KEY'), Type.Literal('CONNECT_APP')]),
    id: Type.String(),
    trustedDocumentsOnly: Type.Boolean({
      description: 'True: /graphql and the WebSocket run only the documents below.',
    }),
    maxComplexity: Nullable(
      Type.Integer({ description: "The credential's own query-cost limit; null: the gateway's." }),
    ),
    maxDepth: Nullable(Type.Integer({ description: "The credential's own depth limit; null: the gateway's." })),
    allowedOrigins: Type.Array(Type.String(), { description: "Connect apps' browser origins; empty for keys." }),
    trustedDocuments: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: '`sha256:<hex>`, the client preset documentId.' }),
          sha256Hash: Type.String({ description: "Bare hex, Apollo's persistedQuery.sha256Hash." }),
          operationName: Nullable(Type.String()),
          body: Type.String(),
          createdAt: DateTimeString,
        },
        { title: 'TrustedDocument' },
      ),
    ),
  },
  { title: 'GraphQLAccess' },
);

const RegisteredSchema = Type.Object(
  { registered: Type.Integer(), alreadyRegistered: Type.Integer(), access: GraphQLAccessSchema },
  { title: 'RegisteredTrustedDocuments' },
);

const IdParam = Type.Object({ id: Type.String() });

const SettingsBody = Type.Object({
  trustedDocumentsOnly: Type.Optional(Type.Boolean()),
  maxComplexity: Type.Optional(
    Type.Integer({ minimum: 0, description: "1 to the gateway's GRAPHQL_MAX_COST; 0 goes back to the gateway's." }),
  ),
  maxDepth: Type.Optional(
    Type.Integer({ minimum: 0, description: "1 to the gateway's GRAPHQL_MAX_DEPTH; 0 goes back to the gateway's." }),
  ),
});

const DocumentsBody = Type.Object({
  documents: Type.Array(
    Type.Object({
      body: Type.String({ minLength: 1 }),
      hash: Type.Optional(Type.String({ description: 'SHA-256 of `body`, bare hex or `sha256:<hex>`; checked.' })),
    }),
    { minItems: 1, maxItems: 500 },
  ),
});

/**
 * The four GraphQL access operations for one kind of credential: API keys under
 * /api/v1/api-keys/{id}, Connect apps under /api/v1/connect-apps/{id} (docs/graphql.md, "Trusted
 * documents and per-credential limits").
 */
function routesOf(kind: 'API_KEY' | 'CONNECT_APP', base: string, what: string, origins: boolean): RestRoute[] {
  const credential = (id: unknown) => ({ kind, id });
  // Operation names are the OpenAPI operationIds: one per kind of credential.
  const named = kind === 'API_KEY' ? 'ApiKey' : 'ConnectApp';
  return defineRoutes([
    {
      method: 'GET',
      path: `${base}/:id/graphql-access`,
      tag: 'GraphQL access',
      summary: `Read ${what}'s GraphQL access`,
      description: `${what[0]!.toUpperCase()}${what.slice(1)}'s GraphQL settings (trusted documents only, its own limits${origins ? ', browser origins' : ''}) and trusted documents.`,
      operation: `query ${named}GraphQLAccess($credential: CredentialInput!) { graphqlAccess(credential: $credential) { ${ACCESS_FIELDS} } }`,
      params: IdParam,
      variables: ({ params }) => ({ credential: credential(params.id) }),
      message: 'GraphQL access retrieved successfully',
      response: GraphQLAccessSchema,
    },
    {
      method: 'PATCH',
      path: `${base}/:id/graphql-access`,
      tag: 'GraphQL access',
      summary: `Change ${what}'s GraphQL access`,
      description:
        'A field left out keeps its value. Only tightens the gateway: a limit above its own is refused. A credential cannot change its own (403).',
      operation: `mutation Set${named}GraphQLAccess($input: GraphQLAccessInput!) { setGraphQLAccess(input: $input) { ${ACCESS_FIELDS} } }`,
      params: IdParam,
      body: origins
        ? Type.Object({
            ...SettingsBody.properties,
            allowedOrigins: Type.Optional(
              Type.Array(Type.String(), {
                maxItems: 20,
                description: 'scheme://host[:port]; https, or http on localhost.',
              }),
            ),
          })
        : SettingsBody,
      variables: ({ params, body }) => ({ input: { credential: credential(params.id), ...(body as object) } }),
      message: 'GraphQL access updated successfully',
      response: GraphQLAccessSchema,
    },
    {
      method: 'POST',
      path: `${base}/:id/trusted-documents`,
      tag: 'GraphQL access',
      summary: `Register trusted documents for ${what}`,
      description:
        'Registers GraphQL documents (for example the client preset persisted-documents.json entries); one already registered is left as it is.',
      operation: `mutation Register${named}TrustedDocuments($input: RegisterTrustedDocumentsInput!) { registerTrustedDocuments(input: $input) { registered alreadyRegistered access { ${ACCESS_FIELDS} } } }`,
      params: IdParam,
      body: DocumentsBody,
      variables: ({ params, body }) => ({
        input: { credential: credential(params.id), documents: (body as { documents: unknown[] }).documents },
      }),
      message: 'Trusted documents registered successfully',
      response: RegisteredSchema,
    },
    {
      method: 'DELETE',
      path: `${base}/:id/trusted-documents/:hash`,
      tag: 'GraphQL access',
      summary: `Remove a trusted document of ${what}`,
      description: 'By its hash (bare hex or `sha256:<hex>`); a hash not registered changes nothing.',
      operation: `mutation Remove${named}TrustedDocument($credential: CredentialInput!, $hashes: [String!]!) { removeTrustedDocuments(credential: $credential, hashes: $hashes) { ${ACCESS_FIELDS} } }`,
      params: Type.Object({ id: Type.String(), hash: Type.String() }),
      variables: ({ params }) => ({ credential: credential(params.id), hashes: [params.hash] }),
      message: 'Trusted document removed successfully',
      response: GraphQLAccessSchema,
    },
  ]);
}

export const graphqlAccessRoutes: RestRoute[] = [
  ...routesOf('API_KEY', '/api/v1/api-keys', 'an API key', false),
  ...routesOf('CONNECT_APP', '/api/v1/connect-apps', 'a Connect app', true),
];

import { Type } from '@sinclair/typebox';
import { LEVEL_LABELS, PERMISSION_LEVELS, parsePermissionLevel } from '../../domain/auth/permissions.js';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

const API_KEY_FIELDS = 'id name environment permission displayPrefix createdAt lastUsedAt revokedAt';

const Permission = Type.Union(
  PERMISSION_LEVELS.map((p) => Type.Literal(p)),
  { description: 'READ_ONLY (default), TRANSACTIONS, ACCOUNT_MANAGEMENT or FULL_ACCESS.' },
);
/** What a caller may write: the constant or the seed's label ("Read Only", "Full Access", …). */
const PermissionInput = Type.Union(
  [...PERMISSION_LEVELS, ...PERMISSION_LEVELS.map((p) => LEVEL_LABELS[p])].map((p) => Type.Literal(p)),
  {
    description:
      'A level by its constant or its label: READ_ONLY or "Read Only" (default), TRANSACTIONS or "Transactions", ACCOUNT_MANAGEMENT or "Account Management", FULL_ACCESS or "Full Access".',
  },
);

const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
    permission: Permission,
    displayPrefix: Type.String(),
    createdAt: DateTimeString,
    lastUsedAt: Nullable(DateTimeString),
    revokedAt: Nullable(DateTimeString),
  },
  { title: 'ApiKey' },
);

export const apiKeyRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/api-keys',
    tag: 'API keys',
    summary: 'List API keys',
    description:
      "The keys of the caller's account in the caller's environment, newest first. Key values are never listed.",
    operation: `query ApiKeys { apiKeys { ${API_KEY_FIELDS} } }`,
    message: 'API keys retrieved successfully',
    response: Type.Array(ApiKeySchema),
  },
  {
    method: 'POST',
    path: '/api/v1/api-keys',
    tag: 'API keys',
    summary: 'Create an API key',
    description:
      "Creates a key in the caller's environment. The value is in `data.key` and is shown only this once. A credential cannot create a key with abilities it lacks (403).",
    operation: `mutation CreateApiKey($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { ${API_KEY_FIELDS} } } }`,
    body: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 100 }),
      permission: Type.Optional(PermissionInput),
    }),
    variables: ({ body }) => {
      const { permission, ...rest } = body as { permission?: string };
      return { input: permission === undefined ? rest : { ...rest, permission: parsePermissionLevel(permission) } };
    },
    message: 'API key created successfully',
    response: Type.Object({ key: Type.String(), apiKey: ApiKeySchema }, { title: 'CreatedApiKey' }),
  },
  {
    method: 'DELETE',
    path: '/api/v1/api-keys/:id',
    tag: 'API keys',
    summary: 'Revoke an API key',
    operation: `mutation RevokeApiKey($id: ID!) { revokeApiKey(id: $id) { ${API_KEY_FIELDS} } }`,
    params: Type.Object({ id: Type.String() }),
    message: 'API key revoked successfully',
    response: ApiKeySchema,
  },
]);

import { Type } from '@sinclair/typebox';
import { defineRoutes } from './route.js';
import { DateTimeString, Nullable } from './schemas.js';

const RECEIVER_FIELDS = 'url secretSetAt readKeySet filledAt';

const ReceiverSchema = Type.Object(
  {
    url: Type.String({ description: "The URL to register upstream as this account's webhook URL." }),
    secretSetAt: Nullable(DateTimeString),
    readKeySet: Type.Boolean({ description: 'Whether the gap-filling job has a read key for this account.' }),
    filledAt: Nullable(DateTimeString),
  },
  { title: 'UpstreamWebhookReceiver' },
);

/**
 * Facade mode's own REST routes: an account's inbound webhook URL and its upstream secret
 * (docs/facade.md#events-per-partner). Served by a facade only, so they are not in the route table
 * of REST v1 (src/rest/v1), its OpenAPI document or the generated clients.
 */
export const facadeInboundRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/facade/upstream-webhook',
    tag: 'Webhooks',
    summary: "This account's inbound webhook URL",
    operation: `query UpstreamWebhookReceiver { upstreamWebhookReceiver { ${RECEIVER_FIELDS} } }`,
    message: 'Upstream webhook receiver retrieved successfully',
    response: ReceiverSchema,
  },
  {
    method: 'PUT',
    path: '/api/v1/facade/upstream-webhook',
    tag: 'Webhooks',
    summary: "Set this account's upstream webhook secret",
    operation: `mutation RegisterUpstreamWebhookSecret($secret: String!, $readKey: String) {
      registerUpstreamWebhookSecret(secret: $secret, readKey: $readKey) { ${RECEIVER_FIELDS} } }`,
    body: Type.Object({
      secret: Type.String({ minLength: 1, maxLength: 512 }),
      readKey: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    }),
    variables: ({ body }) => {
      const { secret, readKey } = body as { secret: string; readKey?: string };
      return { secret, readKey: readKey ?? null };
    },
    message: 'Upstream webhook secret registered successfully',
    response: ReceiverSchema,
  },
]);

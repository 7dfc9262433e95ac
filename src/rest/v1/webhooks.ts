import { Type } from '@sinclair/typebox';
import { ALL_KINDS, EVENT_KINDS } from '../../domain/webhooks/event-kinds.js';
import { parseWebhookUrl } from '../../domain/webhooks/url-policy.js';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

const ENDPOINT_FIELDS = 'id url description eventTypes enabled disabledReason secretRotationEndsAt createdAt updatedAt';
const ATTEMPT_FIELDS = 'attemptNumber startedAt durationMs statusCode error responseSnippet manual';
const DELIVERY_FIELDS = `id eventId status attemptCount nextAttemptAt createdAt attempts { ${ATTEMPT_FIELDS} }`;

const EventKind = Type.Union([Type.Literal(ALL_KINDS), ...EVENT_KINDS.map((k) => Type.Literal(k))]);

const EndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    description: Nullable(Type.String()),
    eventTypes: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabledReason: Nullable(Type.String()),
    secretRotationEndsAt: Nullable(DateTimeString),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'WebhookEndpoint' },
);

const AttemptSchema = Type.Object({
  attemptNumber: Type.Integer(),
  startedAt: DateTimeString,
  durationMs: Type.Integer(),
  statusCode: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  responseSnippet: Nullable(Type.String()),
  manual: Type.Boolean(),
});

const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(DateTimeString),
    createdAt: DateTimeString,
    attempts: Type.Array(AttemptSchema),
  },
  { title: 'WebhookDelivery' },
);

const WithSecret = Type.Object(
  { endpoint: EndpointSchema, secret: Type.String({ description: 'Shown once.' }) },
  { title: 'WebhookEndpointWithSecret' },
);
const IdParam = Type.Object({ id: Type.String() });

const EndpointBody = {
  url: Type.String({
    maxLength: 2048,
    description: 'https in production; http and local addresses allowed in sandbox.',
  }),
  eventTypes: Type.Array(EventKind, {
    minItems: 1,
    maxItems: EVENT_KINDS.length + 1,
    description: 'Kinds to deliver, or ["*"] for all.',
  }),
  description: Type.String({ maxLength: 500 }),
  enabled: Type.Boolean(),
};

export const webhookRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/webhooks',
    tag: 'Webhooks',
    summary: 'List webhook endpoints',
    operation: `query WebhookEndpoints { webhookEndpoints { ${ENDPOINT_FIELDS} } }`,
    message: 'Webhook endpoints retrieved successfully',
    response: Type.Array(EndpointSchema),
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks',
    tag: 'Webhooks',
    summary: 'Create a webhook endpoint',
    description: 'The signing secret is in `data.secret` and is shown only this once.',
    operation: `mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { ${ENDPOINT_FIELDS} } } }`,
    body: Type.Object({
      url: EndpointBody.url,
      eventTypes: Type.Optional(EndpointBody.eventTypes),
      description: Type.Optional(EndpointBody.description),
      enabled: Type.Optional(EndpointBody.enabled),
    }),
    fieldChecks: (body: { url: string }) => ({ url: () => parseWebhookUrl(body.url) }),
    variables: ({ body }) => ({ input: body }),
    message: 'Webhook endpoint created successfully',
    response: WithSecret,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/:id',
    tag: 'Webhooks',
    summary: 'Retrieve a webhook endpoint',
    operation: `query WebhookEndpoint($id: ID!) { webhookEndpoint(id: $id) { ${ENDPOINT_FIELDS} } }`,
    params: IdParam,
    message: 'Webhook endpoint retrieved successfully',
    response: EndpointSchema,
  },
  {
    method: 'PATCH',
    path: '/api/v1/webhooks/:id',
    tag: 'Webhooks',
    summary: 'Update a webhook endpoint',
    description: 'Change the URL, kinds, description, or enable it again after the service disabled it.',
    operation: `mutation UpdateWebhookEndpoint($id: ID!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { ${ENDPOINT_FIELDS} } }`,
    params: IdParam,
    body: Type.Object({
      url: Type.Optional(EndpointBody.url),
      eventTypes: Type.Optional(EndpointBody.eventTypes),
      description: Type.Optional(EndpointBody.description),
      enabled: Type.Optional(EndpointBody.enabled),
    }),
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    message: 'Webhook endpoint updated successfully',
    response: EndpointSchema,
  },
  {
    method: 'DELETE',
    path: '/api/v1/webhooks/:id',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    operation: `mutation DeleteWebhookEndpoint($id: ID!) { deleteWebhookEndpoint(id: $id) { ${ENDPOINT_FIELDS} } }`,
    params: IdParam,
    message: 'Webhook endpoint deleted successfully',
    response: EndpointSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/:id/rotate-secret',
    tag: 'Webhooks',
    summary: 'Rotate the signing secret',
    description:
      'Returns the new secret once. The previous secret keeps signing (a second `webhook-signature` entry) for `gracePeriodSeconds` (default 86400, at most 604800).',
    operation: `mutation RotateWebhookSecret($id: ID!, $gracePeriodSeconds: Int) { rotateWebhookSecret(id: $id, gracePeriodSeconds: $gracePeriodSeconds) { secret endpoint { ${ENDPOINT_FIELDS} } } }`,
    params: IdParam,
    body: Type.Optional(
      Type.Object({ gracePeriodSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604_800 })) }),
    ),
    variables: ({ params, body }) => ({
      id: params.id,
      gracePeriodSeconds: (body as { gracePeriodSeconds?: number } | undefined)?.gracePeriodSeconds,
    }),
    message: 'Webhook secret rotated successfully',
    response: WithSecret,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/:id/deliveries',
    tag: 'Webhooks',
    summary: 'List deliveries of an endpoint, with every attempt',
    operation: `query WebhookDeliveries($id: ID!, $first: Int) { webhookEndpoint(id: $id) { deliveries(first: $first) { ${DELIVERY_FIELDS} } } }`,
    params: IdParam,
    querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }),
    variables: ({ params, query }) => ({ id: params.id, first: query.limit }),
    result: (data) => (data.webhookEndpoint as { deliveries: unknown }).deliveries,
    message: 'Webhook deliveries retrieved successfully',
    response: Type.Array(DeliverySchema),
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/deliveries/:id/resend',
    tag: 'Webhooks',
    summary: 'Re-send a delivery now',
    operation: `mutation ResendWebhookDelivery($id: ID!) { resendWebhookDelivery(id: $id) { ${DELIVERY_FIELDS} } }`,
    params: IdParam,
    message: 'Webhook delivery queued for re-sending',
    status: 202,
    response: DeliverySchema,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/:id/test',
    tag: 'Webhooks',
    summary: 'Send a test event',
    description: 'Queues a `webhook.test` event for this endpoint only.',
    operation: `mutation SendTestWebhook($id: ID!) { sendTestWebhook(endpointId: $id) { ${DELIVERY_FIELDS} } }`,
    params: IdParam,
    message: 'Test webhook queued',
    status: 202,
    response: DeliverySchema,
  },
]);

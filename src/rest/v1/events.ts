import { Type } from '@sinclair/typebox';
import { MAX_EVENTS_PAGE } from '../../domain/events/event-service.js';
import { TRIGGERABLE_KINDS } from '../../domain/sandbox/trigger-kinds.js';
import { defineRoutes } from '../route.js';

const EVENT_FIELDS = 'id type created data seq';

const EventSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ examples: ['deposit.completed'] }),
    created: Type.Integer({ description: 'Unix time, seconds.' }),
    data: Type.Object({}, { additionalProperties: true }),
    seq: Type.Integer({ description: 'Position in commit order; resume with after=<last seq>.' }),
  },
  { title: 'Event' },
);

export const eventRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/events',
    tag: 'Events',
    summary: 'List events',
    description: "The caller's events in its own environment, in commit order, after position `after`.",
    operation: `query Events($after: SafeInt, $first: Int, $types: [String!]) {
      events(after: $after, first: $first, types: $types) { events { ${EVENT_FIELDS} } endSeq hasMore } }`,
    querystring: Type.Object({
      after: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Return events after this seq.' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EVENTS_PAGE, default: 50 })),
      types: Type.Optional(
        Type.String({ description: 'Comma-separated event kinds, e.g. deposit.completed,payout.failed' }),
      ),
    }),
    variables: ({ query }) => ({
      after: query.after,
      first: query.limit,
      types:
        typeof query.types === 'string'
          ? query.types
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean)
          : undefined,
    }),
    message: 'Events retrieved successfully',
    response: Type.Object(
      { events: Type.Array(EventSchema), endSeq: Type.Integer(), hasMore: Type.Boolean() },
      { title: 'EventPage' },
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/events/:id',
    tag: 'Events',
    summary: 'Retrieve an event',
    operation: `query Event($id: ID!) { event(id: $id) { ${EVENT_FIELDS} } }`,
    params: Type.Object({ id: Type.String() }),
    message: 'Event retrieved successfully',
    response: EventSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/events/sandbox/trigger',
    tag: 'Events',
    summary: 'Trigger an event (sandbox only)',
    description:
      "Fires one event kind for the caller by running the sandbox operation that emits it (a deposit, a payout, a bill payment or an offramp order): the event is the real one, delivered to the caller's webhooks and subscriptions like any other. The answer names the event ids. A production key is refused with 403. Honours Idempotency-Key. See docs/sandbox.md.",
    operation:
      'mutation TriggerSandboxEvent($type: String!) { triggerSandboxEvent(type: $type) { type eventId events { id type } references description } }',
    body: Type.Object({
      type: Type.Union(
        TRIGGERABLE_KINDS.map((kind) => Type.Literal(kind)),
        { description: 'The event kind to fire.', examples: ['payout.failed'] },
      ),
    }),
    variables: ({ body }) => ({ type: (body as { type: string }).type }),
    message: 'Event triggered successfully',
    response: Type.Object(
      {
        type: Type.String({ description: 'The kind asked for.' }),
        eventId: Type.String({ description: 'The id of the event of the kind asked for.' }),
        events: Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { title: 'TriggeredEvent' }), {
          description: 'Every event the operations wrote, in the order written.',
        }),
        references: Type.Array(Type.String(), { description: 'The records the operations made.' }),
        description: Type.String({ description: 'What was done.' }),
      },
      { title: 'SandboxEventTrigger' },
    ),
  },
]);

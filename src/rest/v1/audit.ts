import { Type } from '@sinclair/typebox';
import { MAX_AUDIT_PAGE } from '../../domain/audit/audit-log.js';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

/** REST v1 audit trail (a path of ours; docs/accounts.md#audit-trail). */
export const auditRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/audit-records',
    tag: 'Audit trail',
    summary: "The account's audit trail",
    description:
      'Changes to API keys, webhook endpoints and secrets, payment methods and business customers in this environment, newest first: who (actorKind, actorId), when, from where (ip, userAgent) and what changed (secrets only as changed). Older pages: pass `nextBefore` as `before`.',
    operation: `query AuditRecords($filter: AuditRecordFilter, $first: Int, $before: ID) {
      auditRecords(filter: $filter, first: $first, before: $before) {
        records { id action targetType targetId actorKind actorId changes ip userAgent environment createdAt } nextBefore } }`,
    querystring: Type.Object({
      action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, examples: ['api_key.created'] })),
      targetType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, examples: ['webhook_endpoint'] })),
      targetId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      from: Type.Optional(DateTimeString),
      to: Type.Optional(DateTimeString),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AUDIT_PAGE, default: 50 })),
      before: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    }),
    variables: ({ query }) => ({
      filter: {
        action: query['action'],
        targetType: query['targetType'],
        targetId: query['targetId'],
        from: query['from'],
        to: query['to'],
      },
      first: query['limit'],
      before: query['before'],
    }),
    message: 'Audit records retrieved successfully',
    response: Type.Object(
      {
        records: Type.Array(
          Type.Object(
            {
              id: Type.String(),
              action: Type.String(),
              targetType: Type.String(),
              targetId: Type.String(),
              actorKind: Type.String(),
              actorId: Nullable(Type.String()),
              changes: Type.Object({}, { additionalProperties: true }),
              ip: Nullable(Type.String()),
              userAgent: Nullable(Type.String()),
              environment: Nullable(Type.String()),
              createdAt: DateTimeString,
            },
            { title: 'AuditRecord' },
          ),
        ),
        nextBefore: Nullable(Type.String()),
      },
      { title: 'AuditRecordPage' },
    ),
  },
]);

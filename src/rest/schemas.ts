import { type TSchema, Type } from '@sinclair/typebox';
import { MAX_AMOUNT_KOBO } from '../domain/wallet/naira.js';

/** Schemas shared by many REST routes: the envelope and the seed's error bodies. */

export const Envelope = (data: TSchema) =>
  Type.Object({
    statusCode: Type.Integer({ description: 'The HTTP status, repeated.' }),
    message: Type.String(),
    data,
    errors: Type.Object({}, { description: 'Empty on success.' }),
  });

export const FieldProblem = Type.Object({ field: Type.String(), message: Type.String() });

export const GeneralError = Type.Object(
  {
    statusCode: Type.Integer(),
    message: Type.String({ description: 'A sentence; for bad input it names the field.' }),
    error: Type.String({ description: 'The HTTP status name, e.g. Unauthorized.' }),
    details: Type.Optional(Type.Array(FieldProblem)),
  },
  { $id: 'GeneralError', title: 'GeneralError' },
);

export const RateLimitError = Type.Object(
  { statusCode: Type.Integer(), message: Type.String(), retryAfter: Type.Integer({ description: 'Seconds to wait.' }) },
  { $id: 'RateLimitError', title: 'RateLimitError' },
);

/**
 * A naira amount a caller sends: checked against the range here, before any lookup, so a negative
 * amount is a 400 whatever else is wrong; its decimals are checked where it becomes kobo.
 */
export const NairaAmount = (description = 'Naira, at most two decimals; at most 10,000,000.') =>
  Type.Number({ exclusiveMinimum: 0, maximum: Number(MAX_AMOUNT_KOBO / 100n), description, examples: [1500.5] });

export const Nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);
export const DateTimeString = Type.String({ format: 'date-time' });

/** A date filter's bound, the same on every list: a Lagos calendar day or an instant. */
export const DateFilter = (description: string) =>
  Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:\\d{2}))?$',
    description: `${description} YYYY-MM-DD (a day in Africa/Lagos) or an RFC 3339 date-time.`,
    examples: ['2026-01-31', '2026-01-31T09:30:00Z'],
  });

/** A page of `key` items with the seed's pagination block (page from 1), named `title` in OpenAPI. */
export const PageOf = (key: string, item: TSchema, title: string) =>
  Type.Object(
    {
      [key]: Type.Array(item),
      page: Type.Integer(),
      limit: Type.Integer(),
      total: Type.Integer(),
      totalPages: Type.Integer(),
      hasNext: Type.Boolean(),
      hasPrev: Type.Boolean(),
    },
    { title },
  );

/** The `page` (from 1) and `limit` (1 to `max`) query parameters of a paged list. */
export const PageQuery = (max: number) => ({
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: 20 })),
});

/** A paged list's variables: `page` and `limit`, and every other query parameter as its `filter`. */
export function pageAndFilter({ query }: { query: Record<string, unknown> }): Record<string, unknown> {
  const { page, limit, ...filter } = query;
  return { page, limit, filter };
}

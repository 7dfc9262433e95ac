import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import { type DateBound, parseDateBound } from '../../domain/date-bound.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/**
 * graphql-scalars' DateTime, answering the text itself. Its own serialize answers a Date, which
 * JSON.stringify turns into the same text through Date#toJSON on a slow path: several times the
 * cost of the value's toISOString here, for every date-time of every answer (three in `me`, two
 * or three per record of a list). An invalid Date is answered as before (JSON null).
 */
export const DateTime = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  serialize(value) {
    const date = DateTimeResolver.serialize(value) as Date;
    return Number.isNaN(date.getTime()) ? date : date.toISOString();
  },
});

export const scalarResolvers: Resolvers = {
  DateTime,
  DateOrDateTime: new GraphQLScalarType<DateBound, string>({
    name: 'DateOrDateTime',
    serialize: (value) => {
      const bound = value as DateBound;
      return bound.kind === 'date' ? bound.date : bound.at.toISOString();
    },
    parseValue: (value) => parsed(value),
    parseLiteral: (ast) => parsed(ast.kind === Kind.STRING ? ast.value : undefined),
  }),
  JSON: JSONResolver,
  SafeInt: SafeIntResolver,
};

function parsed(value: unknown): DateBound {
  const bound = typeof value === 'string' ? parseDateBound(value.trim()) : null;
  if (!bound)
    throw new GraphQLError('must be a date (YYYY-MM-DD, Africa/Lagos) or a date-time such as 2026-01-31T09:00:00Z.', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  return bound;
}

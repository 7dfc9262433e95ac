import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import { type DateBound, parseDateBound } from '../../domain/date-bound.js';
import type { Resolvers } from '../generated/resolvers-types.js';
import { isoDateTime } from './iso-date-time.js';

/**
 * graphql-scalars' DateTime, answering the text itself. Its own serialize answers a Date, which
 * JSON.stringify turns into the same text through Date#toJSON on a slow path: several times the
 * cost of writing the text here (isoDateTime), for every date-time of every answer (three in `me`,
 * two or three per record of a list). A valid Date, what the database answers, needs none of its
 * checks; anything else goes through them. An invalid Date instance is refused as before, and a
 * timestamp that makes no date is answered as before (JSON null).
 */
export const DateTime = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  serialize(value) {
    if (value instanceof Date) {
      // An invalid Date instance: graphql-scalars throws its own error for it.
      return Number.isNaN(value.getTime()) ? DateTimeResolver.serialize(value) : isoDateTime(value);
    }
    const date = DateTimeResolver.serialize(value) as Date;
    return Number.isNaN(date.getTime()) ? date : isoDateTime(date);
  },
});

export const scalarResolvers: Resolvers = {
  DateTime,
  DateOrDateTime: new GraphQLScalarType<DateBound, string>({
    name: 'DateOrDateTime',
    serialize: (value) => {
      const bound = value as DateBound;
      return bound.kind === 'date' ? bound.date : isoDateTime(bound.at);
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

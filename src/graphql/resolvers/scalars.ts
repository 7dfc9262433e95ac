import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import type { Resolvers } from '../generated/resolvers-types.js';

export const scalarResolvers: Resolvers = {
  DateTime: DateTimeResolver,
  JSON: JSONResolver,
  SafeInt: SafeIntResolver,
};

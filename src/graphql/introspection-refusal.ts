import { GraphQLError, type ValidationRule } from 'graphql';

/** What a partner reads when introspection is off (production's default): where the schema is instead. */
export const INTROSPECTION_REFUSED =
  'Introspection is turned off on this gateway (the production default): use the published schema ' +
  "(schema.graphql, with the gateway's documentation) instead. The gateway's operator can turn it on " +
  'with GRAPHQL_INTROSPECTION=true.';

/**
 * Refuses `__schema` and `__type` in the gateway's own words, over HTTP and WebSocket alike.
 * Apollo's rule for it told the partner to "pass introspection: true to ApolloServer", a setting
 * of a server they do not run. `validationErrorCode` stays what Apollo's rule gave.
 */
export const introspectionRefusal: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === '__schema' || node.name.value === '__type')
      context.reportError(
        new GraphQLError(INTROSPECTION_REFUSED, {
          nodes: [node],
          extensions: { validationErrorCode: 'INTROSPECTION_DISABLED' },
        }),
      );
  },
});

import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { graphQLExtensions, isInternal, toDomainError } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';

/** graphql-js's hint naming what a misspelt field, argument, type or enum value may have meant. */
const SUGGESTION = / ?Did you mean(.+?)\?$/;

/**
 * Apollo's formatError (and the WebSocket transport's): domain errors keep their message and gain
 * `extensions.code`; errors Apollo raised itself (parse, validation) keep Apollo's code; anything
 * unexpected becomes a bare INTERNAL_SERVER_ERROR, with its stack only when `exposeStack`
 * (GRAPHQL_STACK_TRACES) is on. With `hideSuggestions` (introspection off) a "Did you mean …?" hint is cut
 * from every message: the end of validation cuts it from validation errors over HTTP, but a
 * variable's value is checked after that ("…does not exist in "DepositStatus" enum. Did you mean
 * the enum value "PENDING"?") and the WebSocket validates on its own, so hints there listed enum
 * values and fields the schema otherwise keeps to itself.
 */
export function createFormatError(exposeStack: boolean, log: (error: unknown) => void, hideSuggestions = false) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    // A request-level error (no path) may still carry a domain error, e.g. refused input text.
    const original =
      error instanceof GraphQLError && error.originalError instanceof DomainError
        ? error.originalError
        : unwrapResolverError(error);
    const apolloCode = formatted.extensions?.code;
    if (
      !(original instanceof DomainError) &&
      typeof apolloCode === 'string' &&
      apolloCode !== 'INTERNAL_SERVER_ERROR'
    ) {
      const { stacktrace: _drop, ...extensions } = formatted.extensions ?? {};
      const message = hideSuggestions ? formatted.message.replace(SUGGESTION, '') : formatted.message;
      return { ...formatted, message, extensions: exposeStack ? formatted.extensions : extensions };
    }
    const domain = toDomainError(original);
    if (isInternal(domain)) log(original);
    const extensions = graphQLExtensions(domain);
    if (exposeStack && original instanceof Error) extensions.stacktrace = original.stack?.split('\n');
    return {
      // Over the WebSocket a variable's error reaches here as graphql-js raised it, code-less.
      message: hideSuggestions ? domain.message.replace(SUGGESTION, '') : domain.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions,
    };
  };
}

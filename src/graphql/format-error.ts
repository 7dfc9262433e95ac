import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { graphQLExtensions, isInternal, toDomainError } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';

/**
 * Apollo's formatError: domain errors keep their message and gain `extensions.code`; errors Apollo
 * raised itself (parse, validation) keep Apollo's code; anything unexpected becomes a bare
 * INTERNAL_SERVER_ERROR, with its stack only when `exposeStack` (development) is on.
 */
export function createFormatError(exposeStack: boolean, log: (error: unknown) => void) {
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
      return { ...formatted, extensions: exposeStack ? formatted.extensions : extensions };
    }
    const domain = toDomainError(original);
    if (isInternal(domain)) log(original);
    const extensions = graphQLExtensions(domain);
    if (exposeStack && original instanceof Error) extensions.stacktrace = original.stack?.split('\n');
    return {
      message: domain.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions,
    };
  };
}

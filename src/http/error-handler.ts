import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { graphQLExtensions, isInternal, restErrorReply, toDomainError } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';
import { problemsOf } from '../domain/field-checks.js';
import { validationError, withRuleProblems } from '../rest/validation.js';
import { bearerChallenge, isApiPath } from './bearer-challenge.js';

/** Fastify's own errors (body parsing, limits, validation) as domain errors. */
function fromFastifyError(error: FastifyError, request: FastifyRequest): DomainError {
  if (error instanceof DomainError) return error;
  if (error.validation) {
    const context = error.validationContext ?? 'body';
    const refusal = validationError(error.validation as never, context);
    // A body refused for its shape is also read by the operation's own field rules, so the one
    // answer names every bad field, not the rest on the next try.
    const fieldChecks = request.routeOptions.config?.fieldChecks;
    const body = request.body;
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    return context === 'body' && fieldChecks && isObject
      ? withRuleProblems(
          refusal,
          problemsOf(() => fieldChecks(body)),
        )
      : refusal;
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('PAYLOAD_TOO_LARGE', 'The request body is larger than this route accepts.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      // The parser's own message quotes the body, which may hold card data: say where, not what.
      return new DomainError('BAD_USER_INPUT', `The request body is not valid JSON${jsonPosition(error.message)}.`, {
        field: 'body',
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('BAD_USER_INPUT', 'Send the request body as application/json.', { field: 'content-type' });
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new DomainError('BAD_USER_INPUT', `Bad request: ${error.message}`);
  }
  return toDomainError(error);
}

const jsonPosition = (message: string) => {
  const at = /position (\d+)/.exec(message)?.[1];
  return at ? ` (at character ${at})` : '';
};

const isGraphQLPath = (url: string) => url === '/graphql' || url.startsWith('/graphql?');

/**
 * Every error a route throws leaves as one of the seed's bodies. Unexpected errors are logged
 * with their stack and answered with a bare 500; nothing internal reaches the caller.
 */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const domain = fromFastifyError(error, request);
    if (isInternal(domain)) request.log.error({ err: error }, 'unhandled error');
    const { status, headers, body } = restErrorReply(domain);
    const challenge = isApiPath(request.url) ? bearerChallenge(domain, request.headers) : undefined;
    if (challenge) reply.header('www-authenticate', challenge);
    // A GraphQL client refused before Apollo saw the request (body limit, bad JSON, bad text) still
    // gets a GraphQL response: `errors` with `extensions.code`.
    if (isGraphQLPath(request.url)) {
      return reply
        .code(status)
        .headers(headers)
        .send({ errors: [{ message: domain.message, extensions: graphQLExtensions(domain) }] });
    }
    return reply.code(status).headers(headers).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const { status, body } = restErrorReply(
      new DomainError('NOT_FOUND', `Cannot ${request.method} ${request.url.split('?')[0]}`),
    );
    return reply.code(status).send(body);
  });
}

import { type DocumentNode, GraphQLError, type OperationDefinitionNode, visit } from 'graphql';
import { DomainError } from '../domain/errors.js';
import { type BadText, badTextError, badTextReason, findBadText } from '../http/text-hygiene.js';

/**
 * The refused-text check for a GraphQL operation: its variables (any depth) and the string
 * literals written inline in the document (`"\u0000"` is a valid GraphQL escape). Transport
 * independent: HTTP (the Apollo plugin below) and WebSocket (onSubscribe) both call it.
 */
export function operationTextProblem(
  document: DocumentNode,
  variables: Record<string, unknown> | null | undefined,
): DomainError | undefined {
  const inVariables = findBadText(variables ?? {});
  if (inVariables) return badTextError({ ...inVariables, field: `variables.${inVariables.field}` });
  return literalTextProblem(document);
}

/**
 * The refused-text check of a document's inline string literals alone. Apollo and graphql-ws hand
 * the same DocumentNode for the same document text (their parse caches), so each document is
 * walked once, not once per request.
 */
export function literalTextProblem(document: DocumentNode): DomainError | undefined {
  let found = literalScans.get(document);
  if (found === undefined) {
    found = scanLiterals(document) ?? null;
    literalScans.set(document, found);
  }
  return found ? badTextError(found) : undefined;
}

const literalScans = new WeakMap<DocumentNode, BadText | null>();

function scanLiterals(document: DocumentNode): BadText | undefined {
  let problem: BadText | undefined;
  const argumentPath: string[] = [];
  visit(document, {
    Argument: {
      enter: (node) => void argumentPath.push(node.name.value),
      leave: () => void argumentPath.pop(),
    },
    ObjectField: {
      enter: (node) => void argumentPath.push(node.name.value),
      leave: () => void argumentPath.pop(),
    },
    StringValue(node) {
      const reason = badTextReason(node.value);
      if (reason && !problem) problem = { field: argumentPath.join('.') || 'query', reason };
    },
  });
  return problem;
}

/** A DomainError as a GraphQL request error: Apollo takes the HTTP status from `extensions.http`. */
export function asRequestError(error: DomainError): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: error.code, http: { status: error.status } },
  });
}

const SUBSCRIPTION_OVER_HTTP = () =>
  asRequestError(
    new DomainError(
      'BAD_USER_INPUT',
      'Subscriptions are served over WebSocket only: connect a graphql-ws client (protocol graphql-transport-ws) to ws(s)://<this host>/graphql and subscribe there; HTTP carries queries and mutations.',
    ),
  );

/**
 * What Apollo checks once it knows the operation and before it executes anything, as the error to
 * answer or undefined (the request plugin in apollo.ts throws it):
 * - refused text in variables or inline literals → 400 BAD_USER_INPUT naming the field;
 * - a subscription over HTTP → 400 telling the client to use the WebSocket (graphql-ws).
 */
export function operationRefusal(
  document: DocumentNode,
  request: { http?: { method: string }; variables?: Record<string, unknown> | null },
  operation: OperationDefinitionNode | undefined,
): GraphQLError | undefined {
  if (operation?.operation === 'subscription') return SUBSCRIPTION_OVER_HTTP();
  // A POST body (variables included) was scanned whole before Apollo saw it
  // (assertCleanRequest); GET carries its variables as JSON text, read only now.
  const problem =
    request.http?.method === 'POST' ? literalTextProblem(document) : operationTextProblem(document, request.variables);
  return problem ? asRequestError(problem) : undefined;
}

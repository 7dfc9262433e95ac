import { createHash } from 'node:crypto';
import { type DocumentNode, Kind, parse, print } from 'graphql';
import { badInput } from '../errors.js';

/** Lowercase hex SHA-256 of a document's exact text: Apollo's persisted-query hash. */
export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A document hash as clients send it, as stored: Apollo's `extensions.persistedQuery.sha256Hash`
 * (64 hex digits) or the GraphQL-over-HTTP / client preset `documentId` (`sha256:` + 64 hex
 * digits). Undefined when it is neither.
 */
export function normalizedDocumentHash(given: unknown): string | undefined {
  if (typeof given !== 'string') return undefined;
  const hex = given.startsWith('sha256:') ? given.slice('sha256:'.length) : given;
  return /^[0-9a-fA-F]{64}$/.test(hex) ? hex.toLowerCase() : undefined;
}

/**
 * The hash of a parsed document's canonical print (graphql-js `print`: no comments, one layout), so
 * a client sending a registered document's text in another layout (its own `print`, extra spaces)
 * is matched. Cached per parsed document: Apollo and graphql-ws hand the same DocumentNode for the
 * same text.
 */
export function canonicalHashOf(document: DocumentNode): string {
  let hash = canonicalHashes.get(document);
  if (hash === undefined) {
    hash = sha256Hex(print(document));
    canonicalHashes.set(document, hash);
  }
  return hash;
}

const canonicalHashes = new WeakMap<DocumentNode, string>();

/** The first operation's name, if it has one, to name a document in errors and lists. */
export function operationNameOf(document: DocumentNode): string | null {
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) return definition.name?.value ?? null;
  }
  return null;
}

export interface DescribedDocument {
  hash: string;
  canonicalHash: string;
  operationName: string | null;
}

/**
 * A document to register, checked: it parses and holds at least one operation, and `hash`, when
 * given, is the SHA-256 of its exact text. `field` names it in errors (`documents[2]`).
 */
export function describeDocument(body: string, givenHash: string | null | undefined, field: string): DescribedDocument {
  if (body.trim() === '') throw badInput(`${field}.body`, `${field}.body must be a GraphQL document.`);
  let document: DocumentNode;
  try {
    document = parse(body);
  } catch (error) {
    throw badInput(`${field}.body`, `${field}.body is not a GraphQL document: ${(error as Error).message}`);
  }
  if (!document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION))
    throw badInput(`${field}.body`, `${field}.body holds no operation (a query, mutation or subscription).`);
  const hash = sha256Hex(body);
  if (givenHash !== undefined && givenHash !== null) {
    const normalized = normalizedDocumentHash(givenHash);
    if (!normalized)
      throw badInput(`${field}.hash`, `${field}.hash must be 64 hex digits, optionally prefixed "sha256:".`);
    if (normalized !== hash)
      throw badInput(
        `${field}.hash`,
        `${field}.hash is not the SHA-256 of ${field}.body (sha256:${hash}): register the text exactly as the hash was made of.`,
      );
  }
  return { hash, canonicalHash: canonicalHashOf(document), operationName: operationNameOf(document) };
}

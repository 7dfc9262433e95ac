import { GraphQLError, parse } from 'graphql';
import { LRUCache } from 'lru-cache';
import {
  canonicalHashOf,
  normalizedDocumentHash,
  operationNameOf,
  sha256Hex,
} from '../domain/graphql-access/document-hash.js';
import type { TrustedDocumentSet } from '../domain/graphql-access/graphql-access-service.js';

/** What a request names its document by: its text, or a hash (Apollo's persisted-query extension). */
export interface DocumentRequest {
  query?: string | undefined;
  operationName?: string | null | undefined;
  extensions?: { persistedQuery?: { sha256Hash?: unknown } | undefined } | Record<string, unknown> | null | undefined;
}

/** The refusal of a document a trusted-documents-only credential has not registered: 403, code named for clients. */
export const NOT_ALLOWED = 'PERSISTED_QUERY_NOT_ALLOWED';

const refusal = (message: string) =>
  new GraphQLError(message, { extensions: { code: NOT_ALLOWED, http: { status: 403 } } });

/**
 * Which of a credential's trusted documents a request runs, for a credential that runs trusted
 * documents only: the text to run (the registered text, for a request by hash), or the refusal.
 * A text is matched by the SHA-256 of its exact characters first, then by that of its canonical
 * print, so a client printing the registered document in its own layout is matched too. The
 * refusal names the operation and the hash, never anything of the credential.
 */
export function trustedDocumentOf(set: TrustedDocumentSet, request: DocumentRequest): string | GraphQLError {
  const persisted = (request.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery;
  if (request.query === undefined || request.query === '') {
    const hash = normalizedDocumentHash(persisted?.sha256Hash);
    const found = hash ? set.byHash.get(hash) : undefined;
    if (found) return found.body;
    return refusal(
      hash
        ? `No trusted document with hash sha256:${hash} is registered for this credential, which runs registered documents only.`
        : 'This credential runs registered documents only: send a registered document, or its SHA-256 as extensions.persistedQuery.sha256Hash or documentId.',
    );
  }
  const text = request.query;
  const hash = sha256Hex(text);
  if (set.byHash.has(hash)) return text;
  const { canonical, operationName } = canonicalOf(hash, text);
  if (canonical && set.canonical.has(canonical)) return text;
  const name = request.operationName ?? operationName;
  return refusal(
    `This credential runs registered documents only, and ${name ? `operation "${name}"` : 'this anonymous operation'} (sha256:${hash}) is not one of them: register it first (registerTrustedDocuments, or npm run trusted-documents).`,
  );
}

/**
 * Canonical hashes of texts sent, by the SHA-256 of their exact text: each text is parsed once,
 * not once per request. A text that does not parse has none (it cannot be a registered document).
 */
const canonicals = new LRUCache<string, { canonical: string | null; operationName: string | null }>({ max: 2_000 });

function canonicalOf(hash: string, text: string) {
  let found = canonicals.get(hash);
  if (!found) {
    try {
      const document = parse(text);
      found = { canonical: canonicalHashOf(document), operationName: operationNameOf(document) };
    } catch {
      found = { canonical: null, operationName: null };
    }
    canonicals.set(hash, found);
  }
  return found;
}

/**
 * The GraphQL-over-HTTP persisted-documents form of a POST body (`documentId: "sha256:<hex>"`, what
 * the client preset's persisted documents send) as Apollo's persisted-query extension, which Apollo
 * reads: it drops a body's `documentId`. A GET names a hash by Apollo's `extensions` parameter.
 */
export function documentIdAsPersistedQuery(body: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const carrier = body as Record<string, unknown>;
  if (carrier.documentId === undefined || (carrier.query !== undefined && carrier.query !== '')) return;
  const sha256Hash = normalizedDocumentHash(carrier.documentId) ?? String(carrier.documentId);
  const extensions = carrier.extensions && typeof carrier.extensions === 'object' ? carrier.extensions : {};
  carrier.extensions = { ...(extensions as object), persistedQuery: { version: 1, sha256Hash } };
  delete carrier.documentId;
}

import { LRUCache } from 'lru-cache';
import type { Database } from '../../db/client.js';
import { type AuditChanges, recordAudit } from '../audit/audit-log.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, InputProblems, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { describeDocument, normalizedDocumentHash } from './document-hash.js';
import { type CredentialRef, credentialOfPrincipal, sameCredential } from './graphql-access.js';
import { checkOrigins } from './origins.js';
import { type OwnedCredential, type TrustedDocumentRow, trustedDocumentStore } from './trusted-document-store.js';

/** How many documents one key or app may hold: a frontend's operations, not a catalogue. */
export const MAX_TRUSTED_DOCUMENTS = 500;
/** One document's text: the gateway's token limit stops far longer ones anyway. */
export const MAX_DOCUMENT_CHARS = 100_000;

/** A credential's GraphQL settings and trusted documents, as its owner sees them. */
export interface GraphQLAccessView {
  credential: CredentialRef;
  trustedDocumentsOnly: boolean;
  maxCost: number | null;
  maxDepth: number | null;
  allowedOrigins: string[];
  documents: TrustedDocumentRow[];
}

/** What a registration did, and the credential's settings and documents after it. */
export interface RegisteredDocuments {
  registered: number;
  alreadyRegistered: number;
  access: GraphQLAccessView;
}

/** A change of settings: absent (or null) leaves a setting as it is; a limit of 0 goes back to the gateway's. */
export interface GraphQLAccessChange {
  trustedDocumentsOnly?: boolean | null;
  maxCost?: number | null;
  maxDepth?: number | null;
  allowedOrigins?: string[] | null;
}

/** What a request is matched against: a credential's documents by exact hash and by canonical hash. */
export interface TrustedDocumentSet {
  byHash: ReadonlyMap<string, { body: string; operationName: string | null }>;
  canonical: ReadonlySet<string>;
}

/**
 * Trusted documents and the GraphQL settings of API keys and Connect apps: reading and changing
 * them for their owner (GraphQL, the dashboard, scripts/trusted-documents.ts), and the cached sets
 * the /graphql and WebSocket gates match requests against. Every change is an audit record.
 */
export class GraphQLAccessService {
  /** Called after a key's settings change, so its cached principal is read again at once. */
  onKeyChange: (keyId: string) => void = () => undefined;
  /**
   * Document sets by credential, as promises (concurrent requests share one read). The TTL bounds
   * how long a change made by another instance goes unseen here; changes made here evict at once.
   */
  private readonly sets: LRUCache<string, Promise<TrustedDocumentSet>>;
  private origins: { at: number; value: Promise<ReadonlySet<string>> } | undefined;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly limits: { maxCost: number; maxDepth: number },
    private readonly cacheTtlMs: number,
  ) {
    this.sets = new LRUCache({ max: 1_000, ttl: Math.max(cacheTtlMs, 1), ttlAutopurge: false });
  }

  async view(by: Principal, ref: CredentialRef): Promise<GraphQLAccessView> {
    const owned = await this.owned(by, ref);
    return this.viewOf(owned);
  }

  /**
   * Registers documents for one of the caller's keys or apps. Each is checked (it parses; a given
   * hash is the SHA-256 of its text); one already registered is left as it is.
   */
  async register(
    by: Principal,
    ref: CredentialRef,
    documents: ReadonlyArray<{ hash?: string | null; body: string }>,
  ): Promise<RegisteredDocuments> {
    this.refuseOwn(by, ref);
    if (documents.length === 0 || documents.length > MAX_TRUSTED_DOCUMENTS)
      throw badInput('documents', `documents must list 1 to ${MAX_TRUSTED_DOCUMENTS} documents.`);
    const problems = new InputProblems();
    const rows = documents.map((document, i) =>
      problems.check(() => {
        const field = `documents[${i}]`;
        if (document.body.length > MAX_DOCUMENT_CHARS)
          throw badInput(`${field}.body`, `${field}.body must be at most ${MAX_DOCUMENT_CHARS} characters.`);
        return { ...describeDocument(document.body, document.hash, field), body: document.body };
      }),
    );
    problems.throwIfAny();
    const unique = [...new Map(rows.map((r) => [r!.hash, r!])).values()];
    const owned = await this.owned(by, ref);
    const inserted = await this.db.transaction(async (tx) => {
      const added = await trustedDocumentStore.insertDocuments(tx, ref, unique);
      const total = await trustedDocumentStore.countDocuments(tx, ref);
      if (total > MAX_TRUSTED_DOCUMENTS)
        throw badInput(
          'documents',
          `A credential holds at most ${MAX_TRUSTED_DOCUMENTS} trusted documents; this would make ${total}. Remove some first.`,
        );
      if (added.length > 0)
        await this.audit(tx, by, owned, 'trusted_documents.registered', {
          documents: { to: unique.filter((r) => added.includes(r.hash)).map(described) },
        });
      return added;
    });
    this.sets.delete(keyOf(ref));
    return {
      registered: inserted.length,
      alreadyRegistered: unique.length - inserted.length,
      access: await this.viewOf(owned),
    };
  }

  /** Removes documents by hash (hex or `sha256:`…); hashes not registered are ignored. */
  async remove(by: Principal, ref: CredentialRef, hashes: readonly string[]): Promise<GraphQLAccessView> {
    this.refuseOwn(by, ref);
    const problems = new InputProblems();
    const normalized = hashes.map((hash, i) =>
      problems.check(() => {
        const found = normalizedDocumentHash(hash);
        if (!found)
          throw badInput(`hashes[${i}]`, `hashes[${i}] must be 64 hex digits, optionally prefixed "sha256:".`);
        return found;
      }),
    );
    problems.throwIfAny();
    const owned = await this.owned(by, ref);
    await this.db.transaction(async (tx) => {
      const removed = await trustedDocumentStore.deleteDocuments(tx, ref, normalized as string[]);
      if (removed.length > 0)
        await this.audit(tx, by, owned, 'trusted_documents.removed', { documents: { from: removed } });
    });
    this.sets.delete(keyOf(ref));
    return this.viewOf(owned);
  }

  /** Changes a key's or app's settings (see GraphQLAccessChange). Origins are for apps only. */
  async change(by: Principal, ref: CredentialRef, change: GraphQLAccessChange): Promise<GraphQLAccessView> {
    this.refuseOwn(by, ref);
    const problems = new InputProblems();
    // The cost limit is `maxComplexity` to clients (a field named for a cost reads as money).
    const limit = (
      field: 'maxComplexity' | 'maxDepth',
      value: number | null | undefined,
      gateway: number,
      current: number | null,
    ) =>
      problems.check(() => {
        if (value === undefined || value === null) return current;
        if (!Number.isInteger(value) || value < 0 || value > gateway)
          throw badInput(
            field,
            `${field} must be 1 to ${gateway} (the gateway's limit, which a credential can only tighten), or 0 for the gateway's.`,
          );
        return value === 0 ? null : value;
      });
    const owned = await this.owned(by, ref);
    const maxCost = limit('maxComplexity', change.maxCost, this.limits.maxCost, owned.graphqlMaxCost);
    const maxDepth = limit('maxDepth', change.maxDepth, this.limits.maxDepth, owned.graphqlMaxDepth);
    const allowedOrigins = problems.check(() => {
      if (change.allowedOrigins === undefined || change.allowedOrigins === null) return owned.allowedOrigins;
      if (ref.kind !== 'connect_app')
        throw badInput(
          'allowedOrigins',
          'allowedOrigins are a Connect app setting; an API key is held to the gateway-wide CORS_ORIGINS.',
        );
      return checkOrigins(change.allowedOrigins, 'allowedOrigins');
    });
    problems.throwIfAny();
    const after = {
      trustedDocumentsOnly: change.trustedDocumentsOnly ?? owned.trustedDocumentsOnly ?? false,
      graphqlMaxCost: maxCost ?? null,
      graphqlMaxDepth: maxDepth ?? null,
      allowedOrigins: allowedOrigins ?? [],
    };
    const changes = changesOf(owned, after);
    await this.db.transaction(async (tx) => {
      if (ref.kind === 'api_key') await trustedDocumentStore.writeKeySettings(tx, ref.id, after, this.clock.now());
      else await trustedDocumentStore.writeAppSettings(tx, ref.id, after);
      if (Object.keys(changes).length > 0) await this.audit(tx, by, owned, 'graphql_access.changed', changes);
    });
    if (ref.kind === 'api_key') this.onKeyChange(ref.id);
    else if (changes.allowedOrigins) this.origins = undefined;
    return this.viewOf({ ...owned, ...after });
  }

  /** The documents a credential may run, for the gates (cached; see `sets`). */
  documentsOf(ref: CredentialRef): Promise<TrustedDocumentSet> {
    const key = keyOf(ref);
    let found = this.sets.get(key);
    if (!found) {
      found = trustedDocumentStore.listDocuments(this.db, ref).then((rows) => ({
        byHash: new Map(rows.map((r) => [r.hash, { body: r.body, operationName: r.operationName }])),
        canonical: new Set(rows.map((r) => r.canonicalHash)),
      }));
      const stored = found;
      this.sets.set(key, stored);
      stored.catch(() => {
        if (this.sets.get(key) === stored) this.sets.delete(key);
      });
    }
    return found;
  }

  /**
   * Every origin a live app registered (cached as the document sets are): a CORS preflight carries
   * no credential, so it is answered for any of them, and the request itself is held to its app's.
   */
  appOrigins(): Promise<ReadonlySet<string>> {
    const now = Date.now();
    if (!this.origins || now - this.origins.at >= this.cacheTtlMs) {
      const value = trustedDocumentStore.allAppOrigins(this.db).then((list) => new Set(list));
      this.origins = { at: now, value };
      value.catch(() => {
        if (this.origins?.value === value) this.origins = undefined;
      });
    }
    return this.origins.value;
  }

  private async owned(by: Principal, ref: CredentialRef): Promise<OwnedCredential> {
    const what = ref.kind === 'api_key' ? 'API key' : 'App';
    if (!isUuid(ref.id)) throw notFound(what);
    const owned = await trustedDocumentStore.findOwnedCredential(this.db, by.userId, ref);
    // A key or token acts in its environment only; a dashboard session sees all of its apps.
    if (!owned || (by.kind !== 'session' && owned.environment !== by.environment)) throw notFound(what);
    return owned;
  }

  /** A credential never loosens its own settings: another key, or the dashboard, changes them. */
  private refuseOwn(by: Principal, ref: CredentialRef): void {
    const own = credentialOfPrincipal(by);
    if (own && sameCredential(own, ref))
      throw new DomainError(
        'FORBIDDEN',
        'A credential cannot change its own GraphQL access or trusted documents: use another key with the manage ability, or the dashboard.',
        { field: 'credential' },
      );
  }

  private async viewOf(owned: OwnedCredential): Promise<GraphQLAccessView> {
    return {
      credential: owned.ref,
      trustedDocumentsOnly: owned.trustedDocumentsOnly ?? false,
      maxCost: owned.graphqlMaxCost,
      maxDepth: owned.graphqlMaxDepth,
      allowedOrigins: owned.allowedOrigins,
      documents: await trustedDocumentStore.listDocuments(this.db, owned.ref),
    };
  }

  private audit(
    tx: Parameters<typeof recordAudit>[0],
    by: Principal,
    owned: OwnedCredential,
    action: string,
    changes: AuditChanges,
  ) {
    return recordAudit(
      tx,
      {
        userId: owned.userId,
        environment: owned.environment,
        action,
        targetType: owned.ref.kind,
        targetId: owned.ref.id,
        changes,
        principal: by,
      },
      this.clock.now(),
    );
  }
}

const keyOf = (ref: CredentialRef) => `${ref.kind}:${ref.id}`;

const described = (d: { hash: string; operationName: string | null }) =>
  d.operationName ? `${d.operationName} (sha256:${d.hash})` : `sha256:${d.hash}`;

function changesOf(
  before: OwnedCredential,
  after: {
    trustedDocumentsOnly: boolean;
    graphqlMaxCost: number | null;
    graphqlMaxDepth: number | null;
    allowedOrigins: string[];
  },
): AuditChanges {
  const changes: AuditChanges = {};
  if ((before.trustedDocumentsOnly ?? false) !== after.trustedDocumentsOnly)
    changes.trustedDocumentsOnly = { from: before.trustedDocumentsOnly ?? false, to: after.trustedDocumentsOnly };
  if (before.graphqlMaxCost !== after.graphqlMaxCost)
    changes.maxCost = { from: before.graphqlMaxCost, to: after.graphqlMaxCost };
  if (before.graphqlMaxDepth !== after.graphqlMaxDepth)
    changes.maxDepth = { from: before.graphqlMaxDepth, to: after.graphqlMaxDepth };
  if (before.allowedOrigins.join(' ') !== after.allowedOrigins.join(' '))
    changes.allowedOrigins = { from: before.allowedOrigins, to: after.allowedOrigins };
  return changes;
}

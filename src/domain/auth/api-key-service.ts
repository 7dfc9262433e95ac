import { LRUCache } from 'lru-cache';
import { isUuid } from '../ids.js';
import { type AuditChanges, recordAudit } from '../audit/audit-log.js';
import type { Database, Executor } from '../../db/client.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { displayPrefixOf, generateApiKey, hashApiKey, looksLikeApiKey } from './api-key-format.js';
import { type ActiveApiKey, apiKeyStore, type ApiKeyRecord } from './api-key-store.js';
import { graphqlAccessOf } from '../graphql-access/graphql-access.js';
import { IpAllowList } from './ip-allow-list.js';
import { abilitiesOf, type Environment, type PermissionLevel } from './permissions.js';
import type { Principal } from './principal.js';

/** last_used_at is a hint for people, so it is written at most once a minute per key. */
const TOUCH_INTERVAL_MS = 60_000;

export interface CreatedApiKey {
  apiKey: ApiKeyRecord;
  /** The key value. Returned once, here; only its hash is kept. */
  key: string;
}

export class ApiKeyService {
  /**
   * Authenticated keys by hash. The TTL bounds how long a revocation made by another process
   * (the admin CLI, another instance) can go unnoticed; revocations made here evict at once.
   */
  private readonly cache: LRUCache<string, Principal>;
  /** When each key's last_used_at was last written; bounded, so unused keys fall out. */
  private readonly lastTouched = new LRUCache<string, number>({ max: 10_000 });
  /**
   * Lookups under way, by hash: when a busy key's entry expires, every request that arrives before
   * the lookup answers waits for that one lookup instead of sending its own (32 concurrent requests
   * sent 32 queries, and opened as many connections, each time the entry expired). forget()
   * empties it: a lookup that began before answers its own waiters but is no longer here, so what
   * it read (perhaps before a revocation) is not cached.
   */
  private readonly lookups = new Map<string, Promise<Principal | undefined>>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    cacheTtlMs: number,
    private readonly onBackgroundError: (error: unknown) => void = () => undefined,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(cacheTtlMs, 1), ttlAutopurge: false });
  }

  async create(
    input: {
      userId: string;
      name: string;
      environment: Environment;
      permission?: PermissionLevel;
    },
    principal?: Principal,
  ): Promise<CreatedApiKey> {
    const name = input.name.trim();
    if (name === '' || name.length > 100) throw badInput('name', 'name must be 1 to 100 characters.');
    const key = generateApiKey(input.environment);
    const apiKey = await this.db.transaction(async (tx) => {
      const created = await apiKeyStore.insertApiKey(tx, {
        userId: input.userId,
        name,
        environment: input.environment,
        permission: input.permission ?? 'READ_ONLY',
        keyHash: hashApiKey(key),
        displayPrefix: displayPrefixOf(key),
      });
      // The key itself and its hash never enter the record; its shown prefix identifies it.
      const changes = {
        name: { to: created.name },
        permission: { to: created.permission },
        displayPrefix: { to: created.displayPrefix },
      };
      await this.audit(tx, created, 'api_key.created', changes, principal);
      return created;
    });
    return { apiKey, key };
  }

  /**
   * Creates a key on behalf of another credential: same user, same environment, and no ability
   * the creating credential lacks, so a key can never be used to mint a stronger one.
   */
  async createFor(
    principal: Principal,
    input: { name: string; permission?: PermissionLevel | null },
  ): Promise<CreatedApiKey> {
    const permission = input.permission ?? 'READ_ONLY';
    const missing = [...abilitiesOf(permission)].filter((a) => !principal.abilities.has(a));
    if (missing.length > 0) {
      throw new DomainError(
        'FORBIDDEN',
        `This credential cannot create a ${permission} key: it lacks ${missing.join(', ')}.`,
        { field: 'permission' },
      );
    }
    return this.create(
      { userId: principal.userId, name: input.name, environment: principal.environment, permission },
      principal,
    );
  }

  async listFor(principal: Principal): Promise<ApiKeyRecord[]> {
    return (await this.list(principal.userId)).filter((k) => k.environment === principal.environment);
  }

  list(userId: string): Promise<ApiKeyRecord[]> {
    return apiKeyStore.findApiKeysByUser(this.db, userId);
  }

  /** One of the user's keys (revoked ones too); another user's key id answers like a missing one. */
  async getOwned(userId: string, keyId: string): Promise<ApiKeyRecord> {
    const owned = isUuid(keyId) ? await apiKeyStore.findOwnedApiKey(this.db, userId, keyId) : undefined;
    if (!owned) throw notFound('API key');
    return owned;
  }

  /**
   * Revokes one of the user's keys. Another user's key id answers like a missing one. `by`: the
   * credential (or dashboard session) revoking it, for the audit record; none is the system.
   */
  async revoke(userId: string, keyId: string, environment?: Environment, by?: Principal): Promise<ApiKeyRecord> {
    const owned = isUuid(keyId) ? await apiKeyStore.findOwnedApiKey(this.db, userId, keyId) : undefined;
    if (!owned || (environment && owned.environment !== environment)) throw notFound('API key');
    const revoked = owned.revokedAt
      ? owned
      : await this.db.transaction(async (tx) => {
          const now = this.clock.now();
          const row = await apiKeyStore.revokeApiKey(tx, keyId, now);
          if (row)
            await this.audit(tx, owned, 'api_key.revoked', { revokedAt: { from: null, to: now.toISOString() } }, by);
          return row;
        });
    this.forget(keyId);
    return revoked ?? owned;
  }

  /** Drops a key's cached principal, so its next request reads the key (and its allow-list) again. */
  forget(keyId: string): void {
    this.lookups.clear();
    for (const [hash, principal] of this.cache.entries()) {
      if (principal.credentialId === keyId) this.cache.delete(hash);
    }
  }

  private audit(
    tx: Executor,
    key: { id: string; userId: string; environment: Environment },
    action: string,
    changes: AuditChanges,
    principal?: Principal,
  ) {
    return recordAudit(
      tx,
      {
        userId: key.userId,
        environment: key.environment,
        action,
        targetType: 'api_key',
        targetId: key.id,
        changes,
        principal,
      },
      this.clock.now(),
    );
  }

  /** The principal for a key value, or undefined when the key is unknown, malformed or revoked. */
  async authenticate(value: string): Promise<Principal | undefined> {
    if (!looksLikeApiKey(value)) return undefined;
    const hash = hashApiKey(value);
    const cached = this.cache.get(hash);
    if (cached) {
      this.touch(cached.credentialId);
      return cached;
    }
    const underWay = this.lookups.get(hash);
    if (underWay) return underWay;
    return this.track(hash, apiKeyStore.findActiveApiKeyByHash(this.db, hash));
  }

  /**
   * Starts one read of every key among `values` that is neither cached nor being read already, each
   * then a lookup under way that `authenticate` joins, as if it had begun it. For the live sockets'
   * re-check, which asks about every key they hold each second: one statement for all of them
   * instead of one per key. Values that are not keys are passed by; failures reach whoever joins.
   */
  lookUpTogether(values: Iterable<string>): void {
    const hashes = new Set<string>();
    for (const value of values) {
      if (!looksLikeApiKey(value)) continue;
      const hash = hashApiKey(value);
      if (!this.cache.has(hash) && !this.lookups.has(hash)) hashes.add(hash);
    }
    if (hashes.size === 0) return;
    const read = apiKeyStore.findActiveApiKeysByHashes(this.db, [...hashes]);
    // Nobody may join a lookup (its key's socket closed meanwhile): its failure is theirs to see.
    for (const hash of hashes)
      this.track(
        hash,
        read.then((found) => found.get(hash)),
      ).catch(() => undefined);
  }

  /**
   * Makes `read` the lookup of record for `hash` until it answers, which then caches its principal
   * unless a forget() came in between (what it read may be from before a revocation).
   */
  private track(hash: string, read: Promise<ActiveApiKey | undefined>): Promise<Principal | undefined> {
    const lookup: Promise<Principal | undefined> = read.then(
      (record) => {
        const principal = record && this.principalOf(record);
        if (this.lookups.get(hash) === lookup) {
          this.lookups.delete(hash);
          if (principal) this.cache.set(hash, principal);
        }
        return principal;
      },
      (error: unknown) => {
        if (this.lookups.get(hash) === lookup) this.lookups.delete(hash);
        throw error;
      },
    );
    this.lookups.set(hash, lookup);
    return lookup;
  }

  /** An active key's principal. */
  private principalOf(record: ActiveApiKey): Principal {
    const graphql = graphqlAccessOf({ kind: 'api_key', id: record.id }, record);
    const principal: Principal = {
      kind: 'api_key',
      credentialId: record.id,
      userId: record.userId,
      environment: record.environment,
      abilities: abilitiesOf(record.permission),
      ...(record.ipAllowList?.length ? { ipAllowList: new IpAllowList(record.ipAllowList) } : {}),
      ...(graphql ? { graphql } : {}),
    };
    this.touch(record.id);
    return principal;
  }

  private touch(keyId: string): void {
    const now = this.clock.now().getTime();
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    apiKeyStore.touchApiKey(this.db, keyId, new Date(now)).catch(this.onBackgroundError);
  }
}

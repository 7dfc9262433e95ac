import { randomUUID } from 'node:crypto';
import { readsOf } from '../../db/pool-routing.js';
import { and, asc, desc, eq, gt, gte, lt, sql } from 'drizzle-orm';
import { auditRecords } from '../../db/books-schema.js';
import type { Database, Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { badInput } from '../errors.js';
import { isUuid } from '../ids.js';
import { auditHash, GENESIS_HASH } from './audit-hash.js';
import { redactChanges } from './audit-redaction.js';
import type { AuditActor, AuditOrigin } from './request-context.js';

/** Arbitrary, fixed: one writer at a time appends to the chain. */
const CHAIN_LOCK_KEY = 7_262_020_021;
const MAX_TEXT = 512;

export type AuditRecord = typeof auditRecords.$inferSelect;
/** Field → its old and new value; a secret appears only as `{ changed: true }`. */
export type AuditChanges = Record<string, { from?: unknown; to?: unknown; changed?: true }>;

export interface AuditEntry {
  userId: string;
  environment: Environment | null;
  action: string;
  targetType: string;
  targetId: string;
  changes: AuditChanges;
  /** Who acts: its kind and id name the actor, its origin (if any) says where the request came from. */
  principal?: Principal;
  /**
   * Where the request came from, when no principal carries it (flows keyed by a session, anonymous
   * ones); wins over the principal's. Neither: no request (the admin CLI, a job), the actor `system`.
   */
  origin?: AuditOrigin;
}

const clip = (value: string | null | undefined) => (value ? value.slice(0, MAX_TEXT) : null);

/**
 * Appends a record to the chain, in the caller's transaction (so it commits with the change it
 * describes). Takes a transaction-scoped advisory lock: appends are serialised, and a record's
 * `prev_hash` is always the hash of the one before it in `seq` order.
 */
export async function recordAudit(tx: Executor, entry: AuditEntry, at: Date): Promise<void> {
  const origin = entry.origin ?? entry.principal?.origin;
  const actor: AuditActor = entry.principal
    ? { kind: entry.principal.kind, id: entry.principal.credentialId }
    : (origin?.actor ?? { kind: origin ? 'anonymous' : 'system', id: null });
  await tx.execute(sql`select pg_advisory_xact_lock(${CHAIN_LOCK_KEY})`);
  const [last] = await tx
    .select({ hash: auditRecords.hash })
    .from(auditRecords)
    .orderBy(desc(auditRecords.seq))
    .limit(1);
  const content = {
    id: randomUUID(),
    userId: entry.userId,
    environment: entry.environment,
    actorKind: actor.kind,
    actorId: actor.id,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    changes: redactChanges(entry.changes),
    ip: clip(origin?.ip),
    userAgent: clip(origin?.userAgent),
    createdAt: at,
  };
  const prevHash = last?.hash ?? GENESIS_HASH;
  await tx.insert(auditRecords).values({ ...content, prevHash, hash: auditHash(prevHash, content) });
}

/** Old → new of the named fields that differ (plain values only). */
export function diffOf<T extends object>(before: T | null, after: T | null, fields: readonly (keyof T)[]) {
  const changes: AuditChanges = {};
  for (const field of fields) {
    const from = before?.[field] ?? null;
    const to = after?.[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[String(field)] = { from, to };
  }
  return changes;
}

export interface AuditFilter {
  action?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export const MAX_AUDIT_PAGE = 200;

export interface AuditBreak {
  seq: number;
  id: string;
  problem: 'edited' | 'chain_broken';
  detail: string;
}

/** The account owner's records and the chain's verification. */
export class AuditLog {
  constructor(private readonly db: Database) {}

  /** The caller's own records (its user, its environment or none), newest first, by keyset on seq. */
  async list(principal: Principal, filter: AuditFilter, limit: number, before?: string) {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE)
      throw badInput('limit', `limit must be 1 to ${MAX_AUDIT_PAGE}.`);
    if (filter.from && filter.to && filter.from >= filter.to) throw badInput('to', 'to must be after from.');
    let beforeSeq: number | undefined;
    if (before) {
      if (!isUuid(before)) throw badInput('before', 'before must be the id of a record from an earlier page.');
      const [row] = await readsOf(this.db)
        .select({ seq: auditRecords.seq })
        .from(auditRecords)
        .where(and(eq(auditRecords.id, before), eq(auditRecords.userId, principal.userId)));
      if (!row) throw badInput('before', 'before must be the id of a record from an earlier page.');
      beforeSeq = row.seq;
    }
    const rows = await readsOf(this.db)
      .select()
      .from(auditRecords)
      .where(
        and(
          eq(auditRecords.userId, principal.userId),
          sql`(${auditRecords.environment} = ${principal.environment} or ${auditRecords.environment} is null)`,
          filter.action ? eq(auditRecords.action, filter.action) : undefined,
          filter.targetType ? eq(auditRecords.targetType, filter.targetType) : undefined,
          filter.targetId ? eq(auditRecords.targetId, filter.targetId) : undefined,
          filter.from ? gte(auditRecords.createdAt, filter.from) : undefined,
          filter.to ? lt(auditRecords.createdAt, filter.to) : undefined,
          beforeSeq !== undefined ? lt(auditRecords.seq, beforeSeq) : undefined,
        ),
      )
      .orderBy(desc(auditRecords.seq))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    return { records: page, nextBefore: rows.length > limit ? page[page.length - 1]!.id : null };
  }

  /**
   * Walks the whole chain in seq order, recomputing each hash: an edited record no longer matches
   * its hash; a removed (or reordered) one leaves the next record pointing at a hash that is not
   * its predecessor's. Removing the newest records leaves no trace in the chain itself: compare
   * `count` and `headHash` with a copy kept elsewhere (a log line, a backup) for that.
   */
  async verify(): Promise<{ ok: boolean; count: number; headHash: string; breaks: AuditBreak[] }> {
    const breaks: AuditBreak[] = [];
    let prevHash = GENESIS_HASH;
    let afterSeq = 0;
    let count = 0;
    for (;;) {
      const batch = await this.db
        .select()
        .from(auditRecords)
        .where(gt(auditRecords.seq, afterSeq))
        .orderBy(asc(auditRecords.seq))
        .limit(1000);
      for (const record of batch) {
        count += 1;
        if (record.prevHash !== prevHash)
          breaks.push({
            seq: record.seq,
            id: record.id,
            problem: 'chain_broken',
            detail:
              'Its previous-record hash is not the hash of the record before it: a record was removed or inserted.',
          });
        const { seq: _seq, prevHash: stored, hash, ...content } = record;
        if (auditHash(stored, content) !== hash)
          breaks.push({
            seq: record.seq,
            id: record.id,
            problem: 'edited',
            detail: 'Its content does not match its hash.',
          });
        prevHash = hash;
        afterSeq = record.seq;
      }
      if (batch.length < 1000) break;
    }
    return { ok: breaks.length === 0, count, headHash: prevHash, breaks };
  }
}

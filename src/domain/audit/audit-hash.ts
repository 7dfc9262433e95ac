import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every level: jsonb does not keep key order, the hash must not depend on it. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export interface HashedContent {
  id: string;
  userId: string;
  environment: string | null;
  actorKind: string;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  changes: unknown;
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
}

/** SHA-256 of the previous record's hash and this record's content. */
export function auditHash(prevHash: string, record: HashedContent): string {
  const content = canonicalJson({ ...record, createdAt: record.createdAt.toISOString() });
  return createHash('sha256').update(prevHash).update('\n').update(content).digest('hex');
}

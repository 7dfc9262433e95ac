import type { AuditChanges } from './audit-log.js';

/** Field names that carry a bank account number, at any depth of a change. */
const ACCOUNT_NUMBER = /accountnumber$/i;

/**
 * Audit records are append-only and kept for years, so they must not hold whole bank account
 * numbers: a change to `accountNumber` is kept as `accountLast4` (its last four digits), and an
 * account number nested in a changed value is masked to its last four. Applied to every record,
 * whichever service wrote it.
 */
export function redactChanges(changes: AuditChanges): AuditChanges {
  const out: AuditChanges = {};
  for (const [field, change] of Object.entries(changes)) {
    if (ACCOUNT_NUMBER.test(field)) {
      const last4: AuditChanges[string] = {};
      if ('from' in change) last4.from = lastFour(change.from);
      if ('to' in change) last4.to = lastFour(change.to);
      if (change.changed) last4.changed = true;
      out[field.replace(/Number$/i, 'Last4')] = last4;
      continue;
    }
    const masked: AuditChanges[string] = { ...change };
    if ('from' in change) masked.from = maskNested(change.from);
    if ('to' in change) masked.to = maskNested(change.to);
    out[field] = masked;
  }
  return out;
}

function lastFour(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' ? String(value).slice(-4) : null;
}

function maskNested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskNested);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        ACCOUNT_NUMBER.test(k) && (typeof v === 'string' || typeof v === 'number')
          ? `****${String(v).slice(-4)}`
          : maskNested(v),
      ]),
    );
  }
  return value;
}

import { and, eq, inArray } from 'drizzle-orm';
import { apiKeyControls } from '../../db/controls-schema.js';
import { apiKeys } from '../../db/schema.js';
import type { Database, Executor } from '../../db/client.js';
import { type AuditChanges, recordAudit } from '../audit/audit-log.js';
import type { Clock } from '../clock.js';
import { badInput, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { checkBreadth, sameAllowList } from './ip-allow-list.js';
import type { Environment } from './permissions.js';
import type { Principal } from './principal.js';

/** A key's own payout limits (kobo and counts; null = the configured default, 0 = no limit) and allow-list. */
export interface KeyControls {
  maxPayoutKobo: bigint | null;
  maxDailyKobo: bigint | null;
  maxDailyCount: number | null;
  maxHourlyCount: number | null;
  /** Normalised CIDRs; empty = no allow-list. */
  ipAllowList: string[];
}

export const NO_CONTROLS: KeyControls = {
  maxPayoutKobo: null,
  maxDailyKobo: null,
  maxDailyCount: null,
  maxHourlyCount: null,
  ipAllowList: [],
};

export const LIMIT_FIELDS = ['maxPayoutKobo', 'maxDailyKobo', 'maxDailyCount', 'maxHourlyCount'] as const;

/** Reads and changes each API key's controls; every change is an audit record. */
export class KeyControlsService {
  /** Called after a change so cached principals of the key pick up a new allow-list at once. */
  onChange: (keyId: string) => void = () => undefined;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  async of(db: Executor, keyId: string): Promise<KeyControls> {
    // An id from a URL may be anything; a malformed one has no controls (and no query).
    if (!isUuid(keyId)) return NO_CONTROLS;
    const [row] = await db.select().from(apiKeyControls).where(eq(apiKeyControls.apiKeyId, keyId));
    return row ? toControls(row) : NO_CONTROLS;
  }

  /** The controls of each of the given keys (absent = none set). */
  async forKeys(keyIds: string[]): Promise<Map<string, KeyControls>> {
    if (keyIds.length === 0) return new Map();
    const rows = await this.db.select().from(apiKeyControls).where(inArray(apiKeyControls.apiKeyId, keyIds));
    return new Map(rows.map((r) => [r.apiKeyId, toControls(r)]));
  }

  /**
   * Replaces one of the user's keys' controls. Another user's key answers like a missing one; a
   * revoked key cannot be changed. `environment`, when given, must be the key's. An allow-list
   * other than the stored one is checked (ip-allow-list.ts checkBreadth).
   */
  set(
    userId: string,
    keyId: string,
    controls: KeyControls,
    by?: Principal,
    environment?: Environment,
  ): Promise<KeyControls> {
    return this.update(userId, keyId, () => controls, by, environment);
  }

  /**
   * Changes one of the user's keys' controls from the ones stored: `change` gets them read under the
   * key's row lock, so a partial edit (a form that sent one field) is merged with what the last save
   * wrote, never with a copy read before it. Otherwise as `set`.
   */
  async update(
    userId: string,
    keyId: string,
    change: (current: KeyControls) => KeyControls,
    by?: Principal,
    environment?: Environment,
  ): Promise<KeyControls> {
    if (!isUuid(keyId)) throw notFound('API key');
    const saved = await this.db.transaction(async (tx) => {
      // The key's row is locked first, and read once: two saves of one key's controls run one
      // after the other, so each starts from what the other wrote (an unchanged old list is not
      // written back over a narrowed one unchecked, a field one form left out keeps what the other
      // set) and the audit log records each change.
      const [key] = await tx
        .select({ revokedAt: apiKeys.revokedAt, environment: apiKeys.environment })
        .from(apiKeys)
        .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId)))
        .for('update');
      // Another user's, of another environment, or revoked (also while this save waited for the lock).
      if (!key || key.revokedAt || (environment && key.environment !== environment)) throw notFound('API key');
      const before = await this.of(tx, keyId);
      const controls = change(before);
      for (const field of LIMIT_FIELDS) {
        const value = controls[field];
        if (value !== null && value < 0) throw badInput(field, `${field} must be 0 (no limit) or more.`);
      }
      // A new list must keep within today's bounds; the stored one, kept as it is, may predate them
      // (the key's other controls stay editable; the list is flagged on the controls page).
      if (!sameAllowList(before.ipAllowList, controls.ipAllowList)) checkBreadth(controls.ipAllowList);
      const values = { ...controls, ipAllowList: controls.ipAllowList.length ? controls.ipAllowList : null };
      await tx
        .insert(apiKeyControls)
        .values({ apiKeyId: keyId, ...values, updatedAt: this.clock.now() })
        .onConflictDoUpdate({ target: apiKeyControls.apiKeyId, set: { ...values, updatedAt: this.clock.now() } });
      const changes = changesOf(before, controls);
      if (Object.keys(changes).length > 0)
        await recordAudit(
          tx,
          {
            userId,
            environment: key.environment,
            action: 'api_key.controls_changed',
            targetType: 'api_key',
            targetId: keyId,
            changes,
            ...(by ? { principal: by } : {}),
          },
          this.clock.now(),
        );
      return controls;
    });
    this.onChange(keyId);
    return saved;
  }
}

function toControls(row: typeof apiKeyControls.$inferSelect): KeyControls {
  return {
    maxPayoutKobo: row.maxPayoutKobo,
    maxDailyKobo: row.maxDailyKobo,
    maxDailyCount: row.maxDailyCount,
    maxHourlyCount: row.maxHourlyCount,
    ipAllowList: row.ipAllowList ?? [],
  };
}

/** Limits as strings (JSON has no bigint); the allow-list as lists, none of it secret. */
function changesOf(before: KeyControls, after: KeyControls): AuditChanges {
  const changes: AuditChanges = {};
  const shown = (v: bigint | number | null) => (v === null ? null : String(v));
  for (const field of LIMIT_FIELDS) {
    if (shown(before[field]) !== shown(after[field]))
      changes[field] = { from: shown(before[field]), to: shown(after[field]) };
  }
  if (before.ipAllowList.join(',') !== after.ipAllowList.join(','))
    changes.ipAllowList = { from: before.ipAllowList, to: after.ipAllowList };
  return changes;
}

import { and, desc, eq, sql } from 'drizzle-orm';
import { type Database, queryRows } from '../../db/client.js';
import { toSafeNumber } from '../../db/columns.js';
import { reconBreaks, reconRuns } from '../../db/reconciliation-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError } from '../errors.js';
import { clearUnseenBreaks, storeBreaks } from './break-store.js';
import type { Break } from './matcher.js';
import type { ListWindow } from './records.js';
import { reconcileSource, type SourceSummary } from './source-run.js';
import type { ReconciliationSource } from './sources.js';

const DAY_MS = 86_400_000;

export interface ReconciliationSettings {
  /** Hours after the day's end by which a provider's clearing must be zero: default, then per provider. */
  settlementHours: number;
  settlementHoursByProvider: Record<string, number>;
  /** An open break detected longer ago than this is aged. */
  breakMaxAgeMs: number;
}

export type { SourceSummary };

export type ReconRun = typeof reconRuns.$inferSelect & { sources: SourceSummary[] };
export type ReconBreak = typeof reconBreaks.$inferSelect;

export interface ReconNotices {
  openBreaks: number;
  agedBreaks: number;
  /** Providers whose clearing is non-zero past their settlement window, at their latest run. */
  overdueClearing: Array<{ environment: Environment; provider: string; clearingMinor: string; businessDate: string }>;
  /** Providers whose most recent run could not read them (an outage, refused credentials), with the error. */
  unreadProviders: Array<{ environment: Environment; provider: string; error: string; finishedAt: Date }>;
}

/** `YYYY-MM-DD` as the UTC day it names, or a usage error naming `--date`. */
export function dayWindow(date: string): ListWindow {
  const from = /^\d{4}-\d{2}-\d{2}$/.test(date) ? new Date(`${date}T00:00:00.000Z`) : new Date(Number.NaN);
  if (Number.isNaN(from.getTime()) || from.toISOString().slice(0, 10) !== date)
    throw badInput('date', `date must be a day as YYYY-MM-DD, got ${JSON.stringify(date)}.`);
  return { from, to: new Date(from.getTime() + DAY_MS) };
}

/**
 * Reconciliation: for one UTC day, lists each provider's own records through its adapter, matches
 * them with the gateway's (see matcher.ts), and stores the run and its breaks. A provider that
 * cannot be read fails its part of the run (recorded, other providers still reconciled) and leaves
 * its open breaks as they were.
 */
export class Reconciliation {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly sources: ReconciliationSource[],
    private readonly settings: ReconciliationSettings,
  ) {}

  /** The providers it can read, per environment (for usage text and the operator page). */
  providers(environment: Environment): string[] {
    return this.sources.filter((s) => s.environment === environment).map((s) => s.provider);
  }

  /** The day a scheduled run reconciles: yesterday (UTC), whose records have all been written. */
  yesterday(): string {
    return new Date(this.clock.now().getTime() - DAY_MS).toISOString().slice(0, 10);
  }

  /**
   * The day whose every provider's settlement window ended most recently: a daily run reconciles it
   * again, since only then is a collection still unsettled a break (and late records clear).
   */
  settledDay(environment: Environment): string {
    const hours = Math.max(
      0,
      ...this.sources.filter((s) => s.environment === environment).map((s) => this.settlementHoursOf(s.provider)),
    );
    const dayEnd = Math.floor((this.clock.now().getTime() - hours * 3_600_000) / DAY_MS) * DAY_MS;
    return new Date(dayEnd - DAY_MS).toISOString().slice(0, 10);
  }

  async run(options: {
    environment: Environment;
    date?: string;
    provider?: string;
    trigger: 'daily' | 'manual';
  }): Promise<ReconRun> {
    const businessDate = options.date ?? this.yesterday();
    const window = dayWindow(businessDate);
    const sources = this.sources.filter(
      (s) => s.environment === options.environment && (!options.provider || s.provider === options.provider),
    );
    if (options.provider && sources.length === 0)
      throw badInput(
        'provider',
        `provider must be one of ${this.providers(options.environment).join(', ') || '(none configured)'} in ${options.environment}.`,
      );
    const startedAt = this.clock.now();
    const summaries: SourceSummary[] = [];
    const found: Array<{ provider: string; breaks: Break[] }> = [];
    for (const source of sources) {
      const hours = this.settlementHoursOf(source.provider);
      const due = startedAt.getTime() >= window.to.getTime() + hours * 3_600_000;
      const result = await reconcileSource(this.db, source, window, due, hours);
      summaries.push(result.summary);
      if (result.breaks) found.push({ provider: source.provider, breaks: result.breaks });
    }
    const breakCount = summaries.reduce((n, s) => n + s.breaks, 0);
    return this.db.transaction(async (tx) => {
      const [run] = await tx
        .insert(reconRuns)
        .values({
          environment: options.environment,
          businessDate,
          trigger: options.trigger,
          outcome: summaries.some((s) => s.error) ? 'failed' : breakCount > 0 ? 'breaks' : 'ok',
          matched: summaries.reduce((n, s) => n + s.matched, 0),
          breaks: breakCount,
          sources: summaries,
          startedAt,
          finishedAt: this.clock.now(),
        })
        .returning();
      await storeBreaks(tx, { environment: options.environment, businessDate, runId: run!.id, at: startedAt }, found);
      await clearUnseenBreaks(tx, {
        environment: options.environment,
        businessDate,
        runId: run!.id,
        at: this.clock.now(),
        providers: found.map((f) => f.provider),
      });
      return run as ReconRun;
    });
  }

  async runs(limit = 20): Promise<ReconRun[]> {
    return (await this.db.select().from(reconRuns).orderBy(desc(reconRuns.finishedAt)).limit(limit)) as ReconRun[];
  }

  async breaks(options: { open?: boolean; limit?: number } = {}): Promise<ReconBreak[]> {
    return this.db
      .select()
      .from(reconBreaks)
      .where(options.open ? eq(reconBreaks.status, 'open') : undefined)
      .orderBy(desc(reconBreaks.detectedAt), desc(reconBreaks.id))
      .limit(options.limit ?? 100);
  }

  /** An operator acknowledges an open break with a note (what was found, what was done). */
  async resolve(id: string, note: string): Promise<ReconBreak> {
    if (!note.trim()) throw badInput('note', 'note is required: say what was found and what was done.');
    const [row] = await this.db
      .update(reconBreaks)
      .set({ status: 'resolved', resolvedAt: this.clock.now(), resolutionNote: note.trim() })
      .where(and(sql`${reconBreaks.id}::text = ${id}`, eq(reconBreaks.status, 'open')))
      .returning();
    if (row) return row;
    const [existing] = await this.db.select().from(reconBreaks).where(sql`${reconBreaks.id}::text = ${id}`);
    if (!existing) throw new DomainError('NOT_FOUND', `Reconciliation break ${id} was not found.`);
    throw badInput('id', `Break ${id} is ${existing.status}, not open.`);
  }

  /** What needs an operator now: open and aged breaks, clearing non-zero past its window. */
  async notices(): Promise<ReconNotices> {
    const agedBefore = new Date(this.clock.now().getTime() - this.settings.breakMaxAgeMs);
    const [counts] = await queryRows<{ open: unknown; aged: unknown }>(
      this.db,
      sql`/* reconNoticeCounts */ select count(*) as open,
        count(*) filter (where detected_at < ${agedBefore.toISOString()}::timestamptz) as aged
        from recon_breaks where status = 'open'`,
    );
    return {
      openBreaks: toSafeNumber(counts?.open ?? 0),
      agedBreaks: toSafeNumber(counts?.aged ?? 0),
      overdueClearing: (await this.latestClearing()).filter((c) => c.due && c.clearingMinor !== '0') as Array<
        ReconNotices['overdueClearing'][number]
      >,
      unreadProviders: await this.unreadProviders(),
    };
  }

  /** Providers whose most recent run (by when it finished) could not read them. */
  async unreadProviders(): Promise<ReconNotices['unreadProviders']> {
    const recent = (await this.db
      .select()
      .from(reconRuns)
      .orderBy(desc(reconRuns.finishedAt))
      .limit(200)) as ReconRun[];
    const seen = new Set<string>();
    const unread: ReconNotices['unreadProviders'] = [];
    for (const run of recent)
      for (const s of run.sources) {
        const key = `${run.environment}:${s.provider}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (s.error)
          unread.push({
            environment: run.environment,
            provider: s.provider,
            error: s.error,
            finishedAt: run.finishedAt,
          });
      }
    return unread;
  }

  /** Open breaks by provider and kind (a metrics gauge). */
  async openBreakCounts(): Promise<Array<{ environment: string; provider: string; kind: string; n: number }>> {
    const rows = await queryRows<{ environment: string; provider: string; kind: string; n: unknown }>(
      this.db,
      sql`/* reconOpenBreaks */ select environment, provider, kind, count(*) as n
        from recon_breaks where status = 'open' group by environment, provider, kind`,
    );
    return rows.map((r) => ({ ...r, n: toSafeNumber(r.n) }));
  }

  /**
   * Each provider's clearing at its latest run that read it: the figure, and whether its window
   * has passed (a non-zero figure then is overdue).
   */
  async latestClearing(): Promise<
    Array<{ environment: Environment; provider: string; clearingMinor: string; businessDate: string; due: boolean }>
  > {
    const recent = (await this.db
      .select()
      .from(reconRuns)
      .orderBy(desc(reconRuns.businessDate), desc(reconRuns.finishedAt))
      .limit(200)) as ReconRun[];
    const latest = new Map<
      string,
      { environment: Environment; provider: string; clearingMinor: string; businessDate: string; due: boolean }
    >();
    for (const run of recent)
      for (const s of run.sources) {
        const key = `${run.environment}:${s.provider}`;
        if (latest.has(key) || s.error || s.clearingMinor === null) continue;
        latest.set(key, {
          environment: run.environment,
          provider: s.provider,
          clearingMinor: s.clearingMinor,
          businessDate: run.businessDate,
          // Due is judged now, not when the run ran: the window may have passed since.
          due:
            this.clock.now().getTime() >=
            dayWindow(run.businessDate).to.getTime() + this.settlementHoursOf(s.provider) * 3_600_000,
        });
      }
    return [...latest.values()];
  }

  private settlementHoursOf(provider: string): number {
    return this.settings.settlementHoursByProvider[provider] ?? this.settings.settlementHours;
  }
}

/** `flutterwave=24,paycrest=2` as a map; the setting's pattern has checked the shape. */
export function parseSettlementHours(text: string): Record<string, number> {
  const map: Record<string, number> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const [name, hours] = pair.split('=');
    map[name!] = Number(hours);
  }
  return map;
}

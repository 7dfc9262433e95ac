import { and, eq, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { facadeInboundSecrets } from '../../db/facade-schema.js';
import { jobs } from '../../db/schema.js';
import { ABILITIES } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { enqueueJob, type Job, type JobHandler, type JobOutcome } from '../jobs/job-runner.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import type { Caller } from '../users/user-directory.js';
import { INBOUND_MAX_AGE_MS, type InboundEnvelope } from './inbound-envelope.js';
import { type LogOwner, recordNamed, type UpstreamEventLog } from './upstream-event-log.js';

export const GAP_FILL_JOB = 'facade.gap-fill';

/** The binding a read key is sealed under: its account's inbound row. */
export const readKeyBinding = (inboundId: string) => `facade-inbound-read:${inboundId}`;

/**
 * One of the upstream's lists the job reads: the events its records' current states imply, for
 * the records changed since `since` as far as the list can tell. Each event's `id` is the job's
 * own and the same on every run (gapFillId), so two instances finding it write it once.
 */
export interface ChangeSource {
  /** What the docs call it, for the job's error (`bill records`). */
  name: string;
  changes(caller: Caller, since: Date, signal: AbortSignal): Promise<InboundEnvelope[]>;
}

/**
 * Queues the account's gap-filling job unless one is pending. Called in the transaction that sets
 * the account's read key, so the two commit together; the job then queues its own next run.
 */
export async function scheduleGapFill(tx: Executor, owner: { inboundId: string; userId: string }, at: Date) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${GAP_FILL_JOB}), hashtext(${owner.inboundId}))`);
  const [queued] = await tx
    .select({ id: jobs.id })
    .from(jobs)
    .where(
      and(
        eq(jobs.kind, GAP_FILL_JOB),
        eq(jobs.status, 'pending'),
        sql`${jobs.payload}->>'inboundId' = ${owner.inboundId}`,
      ),
    )
    .limit(1);
  if (!queued)
    await enqueueJob(tx, {
      kind: GAP_FILL_JOB,
      runAt: at,
      tenant: owner.userId,
      payload: { inboundId: owner.inboundId },
    });
}

/**
 * Facade mode's gap-filling job, one per partner account with a read key: every `everyMs` it
 * lists the account's records upstream (ChangeSource) and writes each state change the upstream's
 * webhooks did not bring into the events log, through the same door the webhooks use
 * (UpstreamEventLog), so a change is streamed once whichever way it came first. The upstream's
 * retries end about 8.6 h after a delivery first fails, and its signature has no timestamp: this
 * is how an event it never delivered still reaches the partner.
 */
export class GapFillHandler implements JobHandler {
  readonly kind = GAP_FILL_JOB;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly log: UpstreamEventLog,
    private readonly sources: readonly ChangeSource[],
    private readonly everyMs: number,
  ) {}

  async run(job: Job): Promise<JobOutcome> {
    const inboundId = String(job.payload['inboundId'] ?? '');
    const [row] = await this.db.select().from(facadeInboundSecrets).where(eq(facadeInboundSecrets.id, inboundId));
    // Set-up removed, or no read key given: nothing to list with.
    if (!row?.readKeySealed) return { status: 'done' };
    const key = this.secrets.open(row.readKeySealed, readKeyBinding(row.id));
    const owner: LogOwner = { userId: row.userId, environment: row.environment };
    const caller: Caller = {
      principal: {
        kind: 'api_key',
        credentialId: `gap-fill:${row.id}`,
        ...owner,
        abilities: new Set(ABILITIES),
      },
      credential: { value: key, scheme: 'api-key' },
    };
    const now = this.clock.now();
    // The oldest change an inbound delivery would still be taken for (inbound-envelope.ts).
    const since = new Date(now.getTime() - INBOUND_MAX_AGE_MS);
    try {
      for (const source of this.sources) {
        const found = await source.changes(caller, since, job.signal).catch((error: unknown) => {
          // An upstream without the list (a route map path it does not serve): nothing to find there.
          if (error instanceof DomainError && error.code === 'NOT_FOUND') return [];
          throw error;
        });
        await this.write(owner, found);
      }
    } catch (error) {
      // The read key revoked upstream: the job stops until the partner gives another.
      if (error instanceof DomainError && error.code === 'UNAUTHENTICATED')
        return { status: 'failed', error: 'The upstream refused the read key: give another with the set-up.' };
      throw error;
    }
    await this.db.update(facadeInboundSecrets).set({ filledAt: now }).where(eq(facadeInboundSecrets.id, row.id));
    return { status: 'retry', at: new Date(now.getTime() + this.everyMs) };
  }

  /** Writes the events whose kind is not yet taken for their record (most are: asked first, in one query per group). */
  private async write(owner: LogOwner, found: InboundEnvelope[]): Promise<void> {
    const byGroup = new Map<string, string[]>();
    for (const envelope of found) {
      const record = recordNamed(envelope);
      if (record) byGroup.set(record.group, [...(byGroup.get(record.group) ?? []), record.reference]);
    }
    const taken = new Map<string, string[]>();
    for (const [group, references] of byGroup)
      for (const [reference, kinds] of await this.log.kindsTaken(owner, group, references))
        taken.set(`${group}\0${reference}`, kinds);
    for (const envelope of found) {
      const record = recordNamed(envelope);
      if (record && taken.get(`${record.group}\0${record.reference}`)?.includes(envelope.type)) continue;
      await this.log.take(owner, envelope, 'gap-fill');
    }
  }
}

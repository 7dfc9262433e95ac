import { and, count, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { events } from '../../src/db/schema.js';
import type { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { stampCommittedEvents, stampRound } from '../../src/domain/events/relay.js';
import { graphql, type Tenant, type TestApp } from './app.js';
import { waitUntil } from './wait.js';

/**
 * Runs the relay until the given events are stamped and fanned out to webhook deliveries. One pass
 * is not enough when the events are committed by work still under way, or past one round's batch.
 */
export async function stampEvents(db: Database, ids: readonly string[], timeoutMs = 10_000): Promise<void> {
  await waitUntil(async () => {
    if ((await stampRound(db, { wait: true })).behind) return false;
    const [row] = await db
      .select({ n: count() })
      .from(events)
      .where(and(inArray(events.id, [...ids]), isNull(events.seq)));
    return Number(row?.n ?? 0) === 0;
  }, timeoutMs);
}

/**
 * Stamps every event committed so far, and fans every stamped event out to webhook deliveries:
 * one relay round takes at most a batch, and files before a test share its database and may have
 * left more than that unstamped.
 */
export async function stampAll(db: Database): Promise<void> {
  // Bounded: files still running beside this one may keep committing events.
  for (let round = 0; round < 1_000; round++) {
    const { stamped, behind } = await stampRound(db, { wait: true });
    if (stamped === 0 && !behind) return;
  }
}

/**
 * What the workers do once something has committed, as one step: the relay stamps the events and
 * fans them out to webhook deliveries and their jobs (a request writes only its events), then the
 * runner claims and runs the jobs due. Returns how many jobs ran.
 */
export async function relayThenRunDue(db: Database, runner: JobRunner): Promise<number> {
  await stampAll(db);
  return runner.runDueJobs();
}

/** The tenant's event kinds with a prefix, in commit order, once at least `count` are stamped. */
export async function eventsOf(
  t: TestApp,
  tenant: Tenant,
  prefix: string,
  count: number,
): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  let found: Array<{ type: string; data: Record<string, unknown> }> = [];
  await waitUntil(async () => {
    await stampCommittedEvents(t.services.db, { wait: true });
    const { body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ events(first: 200) { events { type data } } }');
    found = body.data!.events.events.filter((e: { type: string }) => e.type.startsWith(prefix));
    return found.length >= count;
  }, 10_000);
  return found;
}

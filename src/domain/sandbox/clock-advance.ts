import { type SQL, sql } from 'drizzle-orm';
import { type Database, type Executor, queryRows } from '../../db/client.js';
import { tellJobWrite } from '../../db/plain-sql.js';
import type { Clock } from '../clock.js';
import { DELIVERY_JOB } from '../webhooks/webhook.js';
import type { TestClockRow } from './test-clock-store.js';
import { testClockStore } from './test-clock-store.js';

/** How long one advance waits in all for the work it makes due; then it returns, the rest still due. */
export const ADVANCE_WAIT_MS = 30_000;
/** At most this many due moments walked in one advance (a job polling every 5 minutes makes 288 a day). */
export const ADVANCE_MAX_STEPS = 1_000;
/** How often the walk looks whether the due work has run. */
const WAIT_POLL_MS = 20;

/** What an advance did. */
export interface AdvanceWalk {
  /** Due moments walked: each a jump of the clock to the next job's due time, then its run awaited. */
  steps: number;
  /** Job runs awaited (a job retried within the advance counts each time it ran). */
  jobsRun: number;
  /** Jobs due by the clock's new time but not yet run when the advance returned (0 unless it ran out of time). */
  jobsStillDue: number;
}

/**
 * The account's pending jobs: those whose due time was read from this clock, and every webhook
 * delivery to the account's sandbox endpoints (the relay writes first attempts with the event's
 * time, and the runner reschedules the same row for each retry, so they are found by endpoint).
 */
function clockJobs(clock: TestClockRow): SQL {
  return sql`status = 'pending' and (
    test_clock_id = ${clock.id}::uuid
    or (kind = ${DELIVERY_JOB} and concurrency_key in (
      select id::text from webhook_endpoints where user_id = ${clock.userId}::uuid and environment = 'sandbox'))
  )`;
}

const toDate = (value: string | Date | null | undefined) => (value ? new Date(value) : null);

/**
 * Walks a clock forward by `byMs`, running the account's work on the way as it falls due. Jobs are
 * stored and claimed in wall time; the clock's time is the wall clock plus its offset. Each step
 * finds the account's earliest pending job; when it is due by the target time, the clock jumps to
 * it (the offset grows by the gap and every pending job of the account moves that much earlier, in
 * one transaction, so each keeps its due time on the clock), the runners are woken, and the step
 * waits until none of the account's jobs is due any more: run, or rescheduled later (a retry, the
 * next run of a schedule), which a later step then reaches. Finally the clock jumps the rest of the
 * way. A job is thus run at its own time on the clock, and what it schedules is timed from there,
 * as if the time had passed.
 */
export async function walkClock(
  db: Database,
  base: Clock,
  start: TestClockRow,
  byMs: number,
  onMoved: (row: TestClockRow) => void,
): Promise<{ clock: TestClockRow; walk: AdvanceWalk }> {
  const target = base.now().getTime() + start.offsetMs + byMs;
  const deadline = Date.now() + ADVANCE_WAIT_MS;
  let clock = start;
  let steps = 0;
  let jobsRun = 0;
  let jobsStillDue = 0;
  while (steps < ADVANCE_MAX_STEPS && Date.now() < deadline) {
    const [next] = await queryRows<{ run_at: string | Date | null }>(
      db,
      sql`select min(run_at) as run_at from jobs where ${clockJobs(clock)}`,
    );
    const nextAt = toDate(next?.run_at);
    if (!nextAt || nextAt.getTime() + clock.offsetMs > target) break;
    steps++;
    const gap = nextAt.getTime() - base.now().getTime();
    if (gap > 0) clock = await jump(db, base, clock, gap, onMoved);
    jobsRun += await countDue(db, clock, base.now());
    tellJobWrite({ runAt: base.now() });
    jobsStillDue = await waitForDue(db, clock, base, deadline);
    if (jobsStillDue > 0) break;
  }
  const rest = target - (base.now().getTime() + clock.offsetMs);
  if (rest > 0) clock = await jump(db, base, clock, rest, onMoved);
  // Work due by the target that the walk had no time or steps left for is due now: it runs anyway.
  if (steps >= ADVANCE_MAX_STEPS || Date.now() >= deadline) jobsStillDue = await countDue(db, clock, base.now());
  if (jobsStillDue > 0) tellJobWrite({ runAt: base.now() });
  return { clock, walk: { steps, jobsRun, jobsStillDue } };
}

/** Moves the clock `gapMs` forward and the account's pending jobs as much earlier, together. */
async function jump(
  db: Database,
  base: Clock,
  clock: TestClockRow,
  gapMs: number,
  onMoved: (row: TestClockRow) => void,
): Promise<TestClockRow> {
  const gap = Math.round(gapMs);
  const moved = await db.transaction(async (tx) => {
    // The account's queued jobs first, the clock second: a job's handler holds its own row (the
    // lease fence) while it enqueues the job's successor, which takes the clock `for share`
    // (jobs/job-runner.ts, clockedRunAt); holding the clock while waiting for that row would deadlock.
    await tx.execute(sql`/* lockClockJobs */ select id from jobs where ${clockJobs(clock)} order by id for update`);
    // Taking the clock waits for every enqueue that read its offset to commit, so the shift below
    // (a statement begun after) reaches their jobs; an enqueue after this waits for the new offset.
    const row = await testClockStore.addOffset(tx, clock.id, gap, base.now());
    await tx.execute(
      sql`/* shiftClockJobs */ update jobs set run_at = run_at - ${`${gap} milliseconds`}::interval where ${clockJobs(clock)}`,
    );
    return row;
  });
  if (!moved) return clock;
  onMoved(moved);
  return moved;
}

async function countDue(db: Executor, clock: TestClockRow, now: Date): Promise<number> {
  const [row] = await queryRows<{ n: string | number }>(
    db,
    sql`select count(*) as n from jobs where ${clockJobs(clock)} and run_at <= ${now.toISOString()}::timestamptz`,
  );
  return Number(row?.n ?? 0);
}

/** Waits until none of the clock's jobs is due (each ran, or was put off to later); the count left at the deadline. */
async function waitForDue(db: Database, clock: TestClockRow, base: Clock, deadline: number): Promise<number> {
  for (;;) {
    const due = await countDue(db, clock, base.now());
    if (due === 0 || Date.now() >= deadline) return due;
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

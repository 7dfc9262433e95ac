import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import type { Lane } from './lanes.js';

export interface ClaimedRow {
  id: string;
  kind: string;
  payload: unknown;
  attempts: number;
  run_at: string | Date;
  tenant: string;
  concurrency_key: string | null;
  event_seq: string | number | null;
  test_clock_id: string | null;
}

export interface ClaimRequest {
  lane: Lane;
  kinds: readonly string[];
  limit: number;
  /** At most this many jobs of one tenant, and of one concurrency key, running at once in this process. */
  perTenant: number;
  perKey: number;
  /** Jobs of the lane this process already runs, by tenant and by key: a claim only fills what is left of each limit. */
  runningPerTenant: ReadonlyMap<string, number>;
  runningPerKey: ReadonlyMap<string, number>;
  /** Jobs this process is running: never claimed again by it, even when a late heartbeat let the lease lapse. */
  running: readonly string[];
  workerId: string;
  leaseToken: string;
  now: Date;
  leaseUntil: Date;
}

/**
 * The claim, as plain text with its lists as array parameters: the runner claims at every doorbell
 * ring of a busy lane, and building this statement through the query builder each time (a chunk per
 * list item) cost more of the process than running it. Parameters: $1 lane; $2 tenants and $3 keys
 * at their limit; $4/$5 running jobs per tenant (names, counts) and $6/$7 per key; $8 job ids this
 * process runs; $9 kinds; $10 now; $11 jobs offered per tenant; $12 per-tenant and $13 per-key
 * limits; $14 most jobs claimed; $15 worker; $16 lease token; $17 lease end.
 */
const claimStatement = statement(
  'jobs_claim_lane_v1',
  `
      with recursive tenants(tenant) as (
        (select tenant from jobs where status = 'pending' and lane = $1 and tenant <> all($2::text[])
          order by tenant limit 1)
        union all
        select (
          select j.tenant from jobs j
          where j.status = 'pending' and j.lane = $1 and j.tenant > t.tenant and j.tenant <> all($2::text[])
          order by j.tenant limit 1
        )
        from tenants t where t.tenant is not null
      ),
      tenant_running as (select * from unnest($4::text[], $5::int[]) as r(name, n)),
      key_running as (select * from unnest($6::text[], $7::int[]) as r(name, n)),
      offered as (
        select c.id, c.run_at, c.event_seq, c.tenant, c.concurrency_key,
          row_number() over (partition by c.tenant order by c.run_at, c.event_seq nulls first) as turn,
          row_number() over (partition by c.concurrency_key order by c.run_at, c.event_seq nulls first) as key_turn
        from tenants t cross join lateral (
          select j.id, j.run_at, j.event_seq, j.tenant, j.concurrency_key from jobs j
          where j.status = 'pending' and j.lane = $1 and j.tenant = t.tenant
            and j.kind = any($9::text[]) and j.run_at <= $10::timestamptz
            and (j.locked_until is null or j.locked_until < $10::timestamptz)
            and (j.concurrency_key is null or j.concurrency_key <> all($3::text[]))
            and j.id <> all($8::uuid[])
          order by j.run_at, j.event_seq nulls first
          limit $11::int
        ) c
        where t.tenant is not null
      ),
      picked as (
        select o.id from offered o
        left join tenant_running tr on tr.name = o.tenant
        left join key_running kr on kr.name = o.concurrency_key
        where o.turn <= $12::int - coalesce(tr.n, 0)
          and (o.concurrency_key is null or o.key_turn <= $13::int - coalesce(kr.n, 0))
        order by o.turn, o.run_at
        limit $14::int
      ),
      claimed as (
        update jobs set locked_by = $15::text, lease_token = $16::uuid,
          locked_until = $17::timestamptz,
          attempts = attempts + 1, updated_at = $10::timestamptz
        where id in (
          select id from jobs
          where id in (select id from picked) and status = 'pending'
            and (locked_until is null or locked_until < $10::timestamptz)
          for update skip locked
        )
        returning id, kind, payload, attempts, run_at, tenant, concurrency_key, event_seq, test_clock_id
      )
      select id, kind, payload, attempts, run_at, tenant, concurrency_key, event_seq, test_clock_id,
        null::timestamptz as next_due
      from claimed
      union all
      select null, null, null, null, null, null, null, null, null, (
        select min(f.run_at) from tenants t cross join lateral (
          select j.run_at from jobs j
          where j.status = 'pending' and j.lane = $1 and j.tenant = t.tenant and j.kind = any($9::text[])
            and (j.locked_until is null or j.locked_until < $10::timestamptz)
          order by j.run_at
          limit 1
        ) f
        where t.tenant is not null
      )
      where not exists (select 1 from claimed)`,
);

/**
 * Claims due jobs of one lane, taking turns across tenants: the tenants with due work are found
 * with a skip scan of the (lane, tenant, run_at) index (one probe per tenant, however deep its
 * backlog), each offers its oldest few due jobs, and the claim takes every tenant's first before
 * any tenant's second. A tenant with 10,000 due jobs therefore gets no more of a claim than one
 * with a single job. The UPDATE re-checks each row under `FOR UPDATE SKIP LOCKED`, so concurrent
 * workers never take the same job, and stamps a fresh lease token (the fence, see job-runner.ts).
 *
 * Jobs due at the same moment go by `event_seq` (a delivery's event position; null for other
 * kinds, first): an endpoint's deliveries are claimed, and returned to be started, in commit
 * order, though one operation's events share one due time.
 */
export async function claimLaneJobs(db: Executor, r: ClaimRequest): Promise<ClaimedRow[]> {
  return (await claimLaneJobsAndNextDue(db, r)).claimed;
}

/** What a claim took, and when the lane's next job falls due if it took nothing. */
export interface LaneClaim {
  claimed: ClaimedRow[];
  /**
   * Only when nothing was claimed: the earliest due time of the lane's pending jobs that no live
   * lease holds (of tenants not at their limit); null when there is none. The runner sleeps until
   * then (capped) instead of polling at a fixed pace. Leased jobs are left out: their worker runs
   * them, and a lease that lapses with its worker is found at the runner's longest idle wait.
   */
  nextDueAt: Date | null;
}

/**
 * `claimLaneJobs`, and in the same statement (no second round trip) the lane's next due moment when
 * nothing was claimed: one index probe per tenant with pending work, the walk the claim already made.
 */
export async function claimLaneJobsAndNextDue(db: Executor, r: ClaimRequest): Promise<LaneClaim> {
  const busy = (running: ReadonlyMap<string, number>, limit: number) =>
    [...running].filter(([, n]) => n >= limit).map(([name]) => name);
  const rows = await runIn<ClaimedRow & { next_due: string | Date | null }>(db, claimStatement, [
    r.lane,
    busy(r.runningPerTenant, r.perTenant),
    busy(r.runningPerKey, r.perKey),
    [...r.runningPerTenant.keys()],
    [...r.runningPerTenant.values()],
    [...r.runningPerKey.keys()],
    [...r.runningPerKey.values()],
    [...r.running],
    [...r.kinds],
    r.now.toISOString(),
    r.perTenant * 4,
    r.perTenant,
    r.perKey,
    r.limit,
    r.workerId,
    r.leaseToken,
    r.leaseUntil.toISOString(),
  ]);
  const sentinel = rows.find((row) => row.id === null);
  const claimed = rows.filter((row) => row.id !== null);
  // An UPDATE returns rows in no particular order; the runner starts them in the order given.
  claimed.sort(
    (a, b) =>
      new Date(a.run_at).getTime() - new Date(b.run_at).getTime() ||
      (a.event_seq === null ? -1 : 0) - (b.event_seq === null ? -1 : 0) ||
      Number(a.event_seq ?? 0) - Number(b.event_seq ?? 0),
  );
  return { claimed, nextDueAt: sentinel?.next_due ? new Date(sentinel.next_due) : null };
}

/**
 * Extends the leases this worker holds, in one statement. A job whose row is locked is skipped, not
 * waited on: most often its own fenced transaction holds the row (job-fence.ts), and while it does
 * no other worker can claim the job either (claims skip locked rows). Waiting there would hold back
 * every other job's heartbeat behind one long transaction, and their leases could lapse meanwhile;
 * the runner extends a skipped job's lease on its own (`extendLeaseOnceFree`).
 * `lost`: jobs no longer this worker's (done, or claimed under another token) when the statement
 * began; `busy`: not extended, its row locked or claimed away while the statement ran (the next
 * beat finds those lost).
 */
export async function extendLeases(
  db: Executor,
  held: ReadonlyArray<{ id: string; leaseToken: string }>,
  leaseUntil: Date,
): Promise<{ lost: string[]; busy: string[] }> {
  if (held.length === 0) return { lost: [], busy: [] };
  const pairs = sql.join(
    held.map((h) => sql`(${h.id}::uuid, ${h.leaseToken}::uuid)`),
    sql`, `,
  );
  // The lock re-reads each row (a claim committed since the first read changed its token), so the
  // update extends only leases still this worker's.
  const rows = await queryRows<{ id: string; extended: boolean }>(
    db,
    sql`with held(id, lease_token) as (values ${pairs}),
        mine as (
          select id from jobs where status = 'pending' and (id, lease_token) in (select * from held)
        ),
        free as (
          select id from jobs where status = 'pending' and (id, lease_token) in (select * from held)
          for update skip locked
        ),
        extended as (
          update jobs set locked_until = ${leaseUntil.toISOString()}::timestamptz
          where id in (select id from free)
          returning id
        )
        select m.id, e.id is not null as extended from mine m left join extended e on e.id = m.id`,
  );
  const mine = new Set(rows.map((r) => r.id));
  return {
    lost: held.filter((h) => !mine.has(h.id)).map((h) => h.id),
    busy: rows.filter((r) => !r.extended).map((r) => r.id),
  };
}

/**
 * Extends one lease, waiting for its row lock: for a job the heartbeat skipped because a transaction
 * held its row, so the lease is extended the moment that transaction ends, before a claim elsewhere
 * could find it lapsed. Never shortens a lease a later beat extended further. False when the lease
 * is no longer this worker's (the job finished, or was claimed under another token).
 */
export async function extendLeaseOnceFree(
  db: Executor,
  held: { id: string; leaseToken: string },
  leaseUntil: Date,
): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`update jobs set locked_until = greatest(locked_until, ${leaseUntil.toISOString()}::timestamptz)
        where id = ${held.id} and lease_token = ${held.leaseToken}::uuid and status = 'pending'
        returning id`,
  );
  return rows.length > 0;
}

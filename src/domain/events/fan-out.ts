import { laneOf } from '../jobs/lanes.js';
import { ALL_KINDS } from '../webhooks/event-kinds.js';
import { DELIVERY_JOB } from '../webhooks/webhook.js';

/**
 * Kinds sent to one endpoint by the code that records them (a test event goes to the endpoint it
 * tests, with its delivery written beside it), so fan-out passes them by.
 */
export const ADDRESSED_KINDS = ['webhook.test'] as const;

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * Webhook fan-out: one statement that writes, for the next `batchSize` stamped events after the
 * cursor (`event_fan_out`), a delivery for each endpoint of the event's owner and environment that
 * is enabled, not deleted and subscribed to its kind at that moment, a `webhook.deliver` job for
 * each delivery, and moves the cursor past them. Run by the relay in its round, after the stamp
 * and in the same transaction, under the same lock (relay.ts), so:
 *
 * - requests write only their events: a delivery row and a job per endpoint in every request's
 *   transaction cost P2P about 40 % of its machine's CPU, and here they are one statement per
 *   batch of events, written by one connection;
 * - once only, across instances: the cursor is read only while the relay lock is held (the
 *   setting the lock statement leaves), by a statement whose snapshot follows the lock, and it
 *   moves in the transaction that writes the deliveries, so a crash before the commit leaves both
 *   undone and the next round redoes the batch. The unique (event_id, endpoint_id) index and
 *   `on conflict do nothing` keep a delivery written another way (a test event's, one an older
 *   release wrote with its event) from being written twice, and a delivery not written here gets
 *   no job here; the cursor moves only from the value read (compare and set). The cursor is not
 *   read `for update`: a row lock gives the transaction an id, and every empty round would then
 *   end in a commit that waits for a WAL flush;
 * - in `seq` order: batches follow the cursor, and each job carries its event's `seq`
 *   (`jobs.event_seq`), by which claims order jobs due at the same moment, so an endpoint's first
 *   attempts start in commit order (retries, and attempts running side by side, keep no order);
 * - due when the event happened: the job's `run_at` and the delivery's `next_attempt_at` are the
 *   event's `created_at`, the operation's clock, so tests that move their clock still find it due;
 * - fairly: fan-out follows commit order and costs at most a row per endpoint of the owner; the
 *   waiting a slow or dead endpoint causes happens in the claims, which take turns across tenants
 *   (jobs/job-claims.ts);
 * - traced: the request's trace context, kept on the event, goes into each job's payload, so the
 *   delivery's trace links to the request that caused it.
 *
 * Endpoints are those at fan-out time, a few milliseconds after the commit while the relay keeps
 * up: an endpoint created (or enabled, or subscribed to the kind) between the event's commit and
 * its fan-out receives it, and one disabled or deleted meanwhile does not. (Deliveries used to be
 * written with the event, to the endpoints at that moment.)
 */
export const fanOutStatement = (batchSize: number) => `
  with cursor as (
    select seq from event_fan_out
    where id = 1 and current_setting('pgw.relay_locked', true) = 'true'
  ),
  batch as (
    -- The next events after the cursor by the seq index, not the range (cursor, cursor + size]:
    -- seq is gap-free as the relay numbers it, but a gap wider than a batch (a restored or edited
    -- table) would have held the cursor still for ever.
    select e.id, e.seq, e.user_id, e.environment, e.type, e.created_at, e.trace_context
    from events e
    where e.seq > (select seq from cursor)
    order by e.seq
    limit ${Math.trunc(batchSize)}
  ),
  fanned as (
    insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at)
    select endpoint.id, b.id, b.created_at
    from batch b join webhook_endpoints endpoint
      on endpoint.user_id = b.user_id and endpoint.environment = b.environment
    where endpoint.enabled and endpoint.deleted_at is null
      and b.type not in (${ADDRESSED_KINDS.map(literal).join(', ')})
      and (b.type = any(endpoint.event_types) or ${literal(ALL_KINDS)} = any(endpoint.event_types))
    order by b.seq
    on conflict (event_id, endpoint_id) do nothing
    returning id, endpoint_id, event_id
  ),
  queued as (
    insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at, event_seq)
    select ${literal(DELIVERY_JOB)}, ${literal(laneOf(DELIVERY_JOB))}, b.user_id::text, f.endpoint_id::text,
      jsonb_build_object('deliveryId', f.id) || coalesce(b.trace_context, '{}'::jsonb), b.created_at, b.seq
    from fanned f join batch b on b.id = f.event_id
    order by b.seq
    returning 1
  ),
  advanced as (
    update event_fan_out set seq = (select max(seq) from batch)
    where id = 1 and seq = (select seq from cursor) and exists (select 1 from batch)
    returning seq
  )
  select (select count(*) from queued)::int as fanned_out, (select count(*) from batch)::int as events`;

/**
 * Whether stamped events wait for fan-out (past a batch, or stamped by another relay), for the
 * relay loop to come back soon. Cheap: the cursor's row and the top of the `seq` index.
 */
export const fanOutBehind = `exists (
    select 1 from event_fan_out where id = 1 and seq < coalesce((select max(seq) from events), 0)
  )`;

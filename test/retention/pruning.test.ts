import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { pruneExpired } from '../../src/domain/retention/retention.js';
import { ago, DAY_MS, HOUR_MS, RETENTION_NOW, retentionDatabase } from '../helpers/retention.js';

const NOW = RETENTION_NOW;
const DAY = DAY_MS;
const HOUR = HOUR_MS;
let seq = 9_000_000_000 + Math.floor(Math.random() * 1e6);

describe('retention', () => {
  const f = retentionDatabase('r');

  // What the relay's fan-out has done by the time a stamped event is old: its cursor is past it.
  const fannedOut = () =>
    f.db.execute(sql`update event_fan_out set seq = greatest(seq, (select max(seq) from events)) where id = 1`);
  const event = async (label: string, createdAt: string, stamped = true) => {
    const [row] = await queryRows<{ id: string }>(
      f.db,
      sql`insert into events (type, user_id, environment, data, created_at, seq)
        values ('webhook.test', ${f.userId}, 'sandbox', ${JSON.stringify({ label })}::jsonb, ${createdAt}::timestamptz,
          ${stamped ? seq++ : null}) returning id`,
    );
    await fannedOut();
    return row!.id;
  };
  const delivery = async (endpointId: string, eventId: string, status: string) => {
    const [row] = await queryRows<{ id: string }>(
      f.db,
      sql`insert into webhook_deliveries (endpoint_id, event_id, status) values (${endpointId}, ${eventId}, ${status}::webhook_delivery_status) returning id`,
    );
    await f.db.execute(sql`insert into webhook_attempts (delivery_id, attempt_number, started_at, duration_ms, status_code)
      values (${row!.id}, 1, ${ago(40 * DAY)}::timestamptz, 12, 500), (${row!.id}, 2, ${ago(40 * DAY)}::timestamptz, 9, 200)`);
    return row!.id;
  };
  const job = async (status: string, updatedAt: string) => {
    const [row] = await queryRows<{ id: string }>(
      f.db,
      sql`insert into jobs (kind, lane, tenant, status, run_at, updated_at)
        values ('retention.test', 'money', '', ${status}::job_status, ${ago(100 * DAY)}::timestamptz, ${updatedAt}::timestamptz) returning id`,
    );
    return row!.id;
  };
  const key = async (name: string, status: string, createdAt: string, lockedUntil: string | null = null) => {
    await f.db.execute(sql`insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, locked_until, created_at)
      values (${f.userId}, 'sandbox', 'retention.test', ${name}, 'h', ${status}::idempotency_status, ${lockedUntil}::timestamptz, ${createdAt}::timestamptz)`);
    return name;
  };
  const exists = async (table: string, column: string, value: string) =>
    (await queryRows(f.db, sql`select 1 from ${sql.identifier(table)} where ${sql.identifier(column)} = ${value}`))
      .length > 0;

  it('prunes only what the policy says, in batches smaller than the work', async () => {
    const [endpoint] = await queryRows<{ id: string }>(
      f.db,
      sql`insert into webhook_endpoints (user_id, environment, url, event_types, secret_sealed)
        values (${f.userId}, 'sandbox', 'http://127.0.0.1:9/x', array['*'], 'sealed') returning id`,
    );
    const oldEvent = await event('31 days, delivered', ago(31 * DAY));
    const oldDelivered = await delivery(endpoint!.id, oldEvent, 'succeeded');
    const oldPendingEvent = await event('31 days, delivery still pending', ago(31 * DAY));
    const oldPending = await delivery(endpoint!.id, oldPendingEvent, 'pending');
    const oldBare = await event('40 days, no delivery', ago(40 * DAY));
    const oldUnstamped = await event('40 days, not yet stamped', ago(40 * DAY), false);
    const recentEvent = await event('29 days', ago(29 * DAY));
    const recentDelivered = await delivery(endpoint!.id, recentEvent, 'failed');

    const doneOld = await job('done', ago(8 * DAY));
    const failedOld = await job('failed', ago(7 * DAY + HOUR));
    const doneRecent = await job('done', ago(6 * DAY));
    const pendingAncient = await job('pending', ago(100 * DAY));

    const keyOld = await key(`k-${randomUUID()}`, 'done', ago(25 * HOUR));
    const keyRecent = await key(`k-${randomUUID()}`, 'done', ago(23 * HOUR));
    const keyAbandoned = await key(`k-${randomUUID()}`, 'running', ago(25 * HOUR), ago(24 * HOUR));
    const keyStillRunning = await key(`k-${randomUUID()}`, 'running', ago(25 * HOUR), ago(-60_000));

    const pruned = await pruneExpired(f.db, NOW, { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 1 });
    // At least these rows (on PGlite the worker's database also holds older test files' rows, which
    // are old by this clock too); which rows went, and which stayed, is checked one by one below.
    expect(pruned.webhookAttempts).toBeGreaterThanOrEqual(2);
    expect(pruned.webhookDeliveries).toBeGreaterThanOrEqual(1);
    expect(pruned.events).toBeGreaterThanOrEqual(2);
    expect(pruned.jobs).toBeGreaterThanOrEqual(2);
    expect(pruned.idempotencyKeys).toBeGreaterThanOrEqual(2);

    // Events: past the window and with nothing pending → gone; a pending delivery keeps its event; unstamped kept.
    expect(await exists('events', 'id', oldEvent)).toBe(false);
    expect(await exists('events', 'id', oldBare)).toBe(false);
    expect(await exists('events', 'id', oldPendingEvent)).toBe(true);
    expect(await exists('events', 'id', oldUnstamped)).toBe(true);
    expect(await exists('events', 'id', recentEvent)).toBe(true);
    expect(await exists('webhook_deliveries', 'id', oldDelivered)).toBe(false);
    expect(await exists('webhook_attempts', 'delivery_id', oldDelivered)).toBe(false);
    expect(await exists('webhook_deliveries', 'id', oldPending)).toBe(true);
    expect(await exists('webhook_attempts', 'delivery_id', oldPending)).toBe(true);
    expect(await exists('webhook_deliveries', 'id', recentDelivered)).toBe(true);
    expect(await exists('webhook_attempts', 'delivery_id', recentDelivered)).toBe(true);
    // Jobs: finished and older than 7 days → gone; recent and pending (whatever their age) kept.
    expect(await exists('jobs', 'id', doneOld)).toBe(false);
    expect(await exists('jobs', 'id', failedOld)).toBe(false);
    expect(await exists('jobs', 'id', doneRecent)).toBe(true);
    expect(await exists('jobs', 'id', pendingAncient)).toBe(true);
    // Idempotency keys: older than 24 h → gone, unless a request still holds one.
    expect(await exists('idempotency_keys', 'key', keyOld)).toBe(false);
    expect(await exists('idempotency_keys', 'key', keyAbandoned)).toBe(false);
    expect(await exists('idempotency_keys', 'key', keyRecent)).toBe(true);
    expect(await exists('idempotency_keys', 'key', keyStillRunning)).toBe(true);

    // A second pass finds nothing more.
    expect(await pruneExpired(f.db, NOW, { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 1 })).toEqual({
      jobs: 0,
      webhookAttempts: 0,
      webhookDeliveries: 0,
      events: 0,
      idempotencyKeys: 0,
      facadeKeys: 0,
      facadeRecordStates: 0,
    });
  });

  it("prunes a facade's record states no event has touched for as long as events are kept, and no others", async () => {
    const state = async (updatedAt: string) => {
      const reference = `BILL-${randomUUID()}`;
      await f.db.execute(sql`insert into facade_record_states
          (user_id, environment, record_group, reference, state_kind, state_at, kinds_taken, created_at, updated_at)
        values (${f.userId}, 'sandbox', 'bill', ${reference}, 'bill.payment.successful', ${updatedAt}::timestamptz,
          array['bill.payment.successful'], ${ago(60 * DAY)}::timestamptz, ${updatedAt}::timestamptz)`);
      return reference;
    };
    const untouched = await state(ago(31 * DAY));
    const touchedLately = await state(ago(29 * DAY));
    const pruned = await pruneExpired(f.db, NOW, { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 1 });
    expect(pruned.facadeRecordStates).toBeGreaterThanOrEqual(1);
    expect(await exists('facade_record_states', 'reference', untouched)).toBe(false);
    expect(await exists('facade_record_states', 'reference', touchedLately)).toBe(true);
  });

  it("prunes a facade's settled key records after the keys' retention, never one whose outcome is unknown", async () => {
    const record = async (state: string, resolvedAt: string | null, sentAt: string) => {
      const key = `fk-${randomUUID()}`;
      await f.db.execute(sql`insert into facade_keys (user_id, environment, operation, key, request_hash, state, keyed, sent_at, resolved_at)
        values (${f.userId}, 'production', 'bills.buyAirtime', ${key}, 'h', ${state}, false, ${sentAt}::timestamptz, ${resolvedAt}::timestamptz)`);
      return key;
    };
    const settledOld = await record('succeeded', ago(30 * HOUR), ago(30 * HOUR));
    const failedOld = await record('failed', ago(30 * HOUR), ago(30 * HOUR));
    const settledRecent = await record('succeeded', ago(2 * HOUR), ago(40 * DAY));
    const unknownOld = await record('unknown', null, ago(40 * DAY));
    const pruned = await pruneExpired(f.db, NOW, { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 1 });
    expect(pruned.facadeKeys).toBeGreaterThanOrEqual(2);
    expect(await exists('facade_keys', 'key', settledOld)).toBe(false);
    expect(await exists('facade_keys', 'key', failedOld)).toBe(false);
    expect(await exists('facade_keys', 'key', settledRecent)).toBe(true);
    expect(await exists('facade_keys', 'key', unknownOld)).toBe(true);
  });

  it('never keeps events less than 30 days or keys less than 24 hours, whatever it is told', async () => {
    const recent = await event('20 days', ago(20 * DAY));
    const keyRecent = await key(`k-${randomUUID()}`, 'done', ago(20 * HOUR));
    await pruneExpired(f.db, NOW, { eventsDays: 1, jobsDays: 1, idempotencyHours: 1, batchSize: 100 });
    expect(await exists('events', 'id', recent)).toBe(true);
    expect(await exists('idempotency_keys', 'key', keyRecent)).toBe(true);
  });
  it('keeps a stamped event the relay has not fanned out yet, however old', async () => {
    const waiting = await event('90 days, stamped, not fanned out', ago(90 * DAY));
    const newer = await event('90 days, newer', ago(90 * DAY));
    await f.db.execute(
      sql`update event_fan_out set seq = (select seq from events where id = ${waiting}) - 1 where id = 1`,
    );
    await pruneExpired(f.db, NOW, { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 100 });
    expect(await exists('events', 'id', waiting)).toBe(true);
    expect(await exists('events', 'id', newer)).toBe(true);
    await fannedOut();
  });

  it('keeps the newest stamped event however old, so the relay never numbers below a reader’s cursor', async () => {
    // Both numbered above every stamped event so far (other files' too, on PGlite's shared database).
    const numberedNext = async (label: string) => {
      const [row] = await queryRows<{ id: string; seq: unknown }>(
        f.db,
        sql`insert into events (type, user_id, environment, data, created_at, seq)
          select 'webhook.test', ${f.userId}, 'sandbox', ${JSON.stringify({ label })}::jsonb,
            ${ago(90 * DAY)}::timestamptz, coalesce(max(seq), 0) + 1 from events
          returning id, seq`,
      );
      return row!;
    };
    const older = await numberedNext('90 days, numbered lower');
    const newest = await numberedNext('90 days, the newest stamped');
    await fannedOut();
    await pruneExpired(f.db, NOW, { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 100 });
    expect(await exists('events', 'id', older.id)).toBe(false);
    expect(await exists('events', 'id', newest.id)).toBe(true);
    const [top] = await queryRows<{ top: unknown }>(f.db, sql`select max(seq) as top from events`);
    expect(Number(top!.top)).toBe(Number(newest.seq));
  });
});

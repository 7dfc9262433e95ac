import { randomUUID } from 'node:crypto';
import { type HrTime, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { and, count, eq, isNull, lte, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { events, jobs } from '../../src/db/schema.js';
import { idempotencyKeys } from '../../src/db/ledger-schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { systemClock } from '../../src/domain/clock.js';
import { Doorbell } from '../../src/domain/events/doorbell.js';
import { EventFeed } from '../../src/domain/events/event-feed.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { hintRelays, stampCommittedEvents, startRelay } from '../../src/domain/events/relay.js';
import { Idempotency } from '../../src/domain/idempotency/idempotency.js';
import { enqueueJob, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { DependencyHealth } from '../../src/health/dependency-health.js';
import { shutdownTracing } from '../../src/observability/tracing.js';
import { installTracing } from '../../src/observability/tracing-sdk.js';
import { startWorkers, type Workers } from '../../src/workers.js';
import { createTestApp, seedTenant, type Tenant, type TestApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { rest } from '../helpers/rest.js';
import { waitUntil } from '../helpers/wait.js';
import { fund } from '../helpers/wallet.js';

/**
 * Background work (the event relay, the job runner, the event feed, the database probe, retries)
 * runs outside the trace of whatever request woke or started it. A request's trace holds what the
 * request did while it ran; a job it enqueued is a trace of its own, linked to it.
 */
describe('traces of background work', () => {
  const exporter = new InMemorySpanExporter();
  const silent = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
  let t: TestApp;
  let workers: Workers | undefined;
  let receiver: Receiver | undefined;
  beforeAll(async () => {
    installTracing({ exporter });
    // A database of its own on PGlite too: it waits for the whole database to be idle, and the worker's
    // shared one holds earlier files' sends whose confirmation jobs keep coming due.
    t = await createTestApp({ isolated: 'even-on-pglite', config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterEach(async () => {
    await workers?.stop(5_000);
    workers = undefined;
    await receiver?.stop();
    receiver = undefined;
  });
  afterAll(async () => {
    await t.close();
    await shutdownTracing();
  });

  const db = () => t.services.db;
  const tracer = () => trace.getTracer('test');

  /** Runs `work` as a request would: inside a span of its own, which ends when `work` has finished. */
  async function asRequest<T>(name: string, work: () => T | Promise<T>): Promise<{ span: ReadableSpan; result: T }> {
    return tracer().startActiveSpan(name, async (span) => {
      try {
        return { span: span as unknown as ReadableSpan, result: await work() };
      } finally {
        span.end();
      }
    });
  }

  /** The spans of `root`'s trace that started after it ended: background work that leaked into it. */
  const startedAfter = (root: ReadableSpan): string[] => {
    const end = nanos(root.endTime);
    return exporter
      .getFinishedSpans()
      .filter((span) => span.spanContext().traceId === root.spanContext().traceId && nanos(span.startTime) > end)
      .map((span) => span.name);
  };

  /** Every committed event stamped, every due job run, every delivery answered: nothing left to do now. */
  async function untilIdle(): Promise<void> {
    await waitUntil(async () => {
      const [unstamped] = await db().select({ n: count() }).from(events).where(isNull(events.seq));
      const [due] = await db()
        .select({ n: count() })
        .from(jobs)
        .where(and(eq(jobs.status, 'pending'), lte(jobs.runAt, new Date())));
      return Number(unstamped?.n) === 0 && Number(due?.n) === 0;
    }, 20_000);
  }

  async function webhookEndpointFor(tenant: Tenant): Promise<void> {
    receiver = await new Receiver().start();
    const created = await rest(t, tenant.keys.ACCOUNT_MANAGEMENT)('POST', '/api/v1/webhooks', {
      url: receiver.url,
      eventTypes: ['*'],
    });
    expect(created.statusCode).toBe(201);
  }

  it("a bill payment's trace ends with its request; its webhook deliveries are traces of their own, linked to it", async () => {
    const tenant = await seedTenant(t.services);
    await webhookEndpointFor(tenant);
    workers = startWorkers(t.services, silent);
    await fund(t, tenant, 5000);
    await untilIdle();
    exporter.reset();

    const paid = await rest(t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/bills/pay/airtime', {
      phoneNumber: '08031234567',
      biller: 'BIL099',
      amount: 100,
    });
    expect(paid.json().data).toMatchObject({ status: 'SUCCESS' });
    // Driven to the end: stamped, delivered and recorded, then the workers stopped (their last
    // rounds and runs finished), so every span the background work made is exported.
    await untilIdle();
    await workers.stop(5_000);
    workers = undefined;

    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'POST /api/v1/bills/pay/airtime' && !span.parentSpanContext)!;
    expect(request).toBeDefined();
    const traceId = request.spanContext().traceId;
    // The request's own statements are in its trace …
    expect(
      spans.filter((span) => span.spanContext().traceId === traceId && span.attributes['db.system.name']),
    ).not.toEqual([]);
    // … and nothing that started after it answered.
    expect(startedAfter(request)).toEqual([]);

    // The deliveries its events set off ran as jobs, each the root of its own trace, linked to the request.
    const deliveries = spans.filter(
      (span) => span.name === 'job webhook.deliver' && span.links.some((link) => link.context.traceId === traceId),
    );
    expect(deliveries).not.toEqual([]);
    for (const delivery of deliveries) {
      expect(delivery.parentSpanContext).toBeUndefined();
      expect(delivery.spanContext().traceId).not.toBe(traceId);
    }
    // Background statements are traced, in the jobs' traces.
    const jobTraces = new Set(deliveries.map((span) => span.spanContext().traceId));
    const background = spans.filter(
      (span) => span.attributes['db.system.name'] && jobTraces.has(span.spanContext().traceId),
    );
    expect(background).not.toEqual([]);
    // The partner's receiver is handed the job's trace, not the request's.
    const handedOn = receiver!.received.map((r) => String(r.headers.traceparent).split('-')[1]);
    expect(handedOn.filter((id) => jobTraces.has(id!))).toHaveLength(deliveries.length);
    expect(handedOn).not.toContain(traceId);
  });

  it('workers started while a request is traced carry on outside its trace', async () => {
    const kind = `traced-${randomUUID()}`;
    let ran = 0;
    const { span } = await asRequest('lazy start', () => {
      workers = startWorkers(t.services, silent, [
        {
          kind,
          run: async () => {
            await db().execute(sql`select 1`);
            ran += 1;
            return { status: 'done' };
          },
        },
      ]);
    });
    // After the request: an event for the relay to stamp and a job for the runner to claim and run.
    const tenant = await seedTenant(t.services);
    const event = await db().transaction((tx) =>
      recordEvent(tx, { type: 'test.ping', userId: tenant.user.id, environment: 'sandbox', data: {} }, new Date()),
    );
    await enqueueJob(db(), { kind, runAt: new Date(), tenant: '' });
    await waitUntil(async () => {
      const [row] = await db().select({ seq: events.seq }).from(events).where(eq(events.id, event.id));
      return row?.seq != null && ran === 1;
    }, 20_000);
    await workers!.stop(5_000);
    workers = undefined;

    expect(startedAfter(span)).toEqual([]);
    const run = exporter.getFinishedSpans().find((s) => s.name === `job ${kind}`)!;
    expect(run.parentSpanContext).toBeUndefined();
  });

  it("a relay woken by a request's event runs its rounds outside the request's trace", async () => {
    let rounds = 0;
    // Idle, it would look again only in a minute: the rounds after the hint are the hint's.
    const relay = startRelay(db(), { idleMs: 60_000, onRound: () => (rounds += 1) });
    let span: ReadableSpan;
    try {
      await waitUntil(() => rounds === 1);
      ({ span } = await asRequest('POST /hint', () => hintRelays()));
      const after = rounds;
      // The hinted round, and those the relay runs while it keeps looking for a moment.
      await waitUntil(() => rounds >= after + 3, 20_000);
    } finally {
      await relay.stop();
    }
    expect(startedAfter(span)).toEqual([]);
  });

  it("a job runner started and poked by a request claims and runs outside the request's trace", async () => {
    const kind = `poked-${randomUUID()}`;
    const done: string[] = [];
    const handler = {
      kind,
      run: async (job: { id: string }) => {
        await db().execute(sql`select 1`);
        done.push(job.id);
        return { status: 'done' as const };
      },
    };
    const runner = new JobRunner(db(), systemClock, [handler], { pollMs: 20, heartbeatMs: 20 });
    let span: ReadableSpan;
    try {
      // The request enqueues a job (so the run is linked to it), then starts the runner and pokes it.
      const request = await asRequest('POST /enqueue', async () => {
        const id = await enqueueJob(db(), { kind, runAt: new Date(), tenant: '' });
        runner.start();
        runner.poke('money');
        return id;
      });
      span = request.span;
      await waitUntil(() => done.includes(request.result), 20_000);
      // Later claims, on timers set while the runner was woken by the request.
      const later = await enqueueJob(db(), { kind, runAt: new Date(), tenant: '' });
      await waitUntil(() => done.includes(later), 20_000);
    } finally {
      await runner.stop(5_000);
    }
    expect(startedAfter(span)).toEqual([]);
    const runs = exporter.getFinishedSpans().filter((s) => s.name === `job ${kind}`);
    expect(runs).toHaveLength(2);
    for (const run of runs) expect(run.parentSpanContext).toBeUndefined();
    const linked = runs.filter((run) => run.links.some((l) => l.context.spanId === span.spanContext().spanId));
    expect(linked).toHaveLength(1);
  });

  it("the doorbell's listeners run outside the trace of whoever rang", async () => {
    const doorbell = new Doorbell();
    const heard: Array<string | undefined> = [];
    doorbell.onRing(() => heard.push(trace.getActiveSpan()?.spanContext().traceId));
    await asRequest('POST /ring', () => doorbell.ring());
    expect(heard).toEqual([undefined]);
  });

  it("the event feed's polls run outside the trace of the subscription that started them", async () => {
    const tenant = await seedTenant(t.services);
    // The feed's statements, each with the span active when it ran: its poll is a query built once
    // (preparedOnce) and run by `execute`, so every object the handle's builders return is watched.
    const polledUnder: Array<string | undefined> = [];
    const watch = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(inner, property, receiver) {
          const value = Reflect.get(inner, property, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (property === 'execute') polledUnder.push(trace.getActiveSpan()?.spanContext().spanId);
            const result = value.apply(inner, args);
            return result !== null && typeof result === 'object' && !(result instanceof Promise)
              ? watch(result)
              : result;
          };
        },
      });
    const watched = watch(db());
    const feed = new EventFeed(watched, 10);
    const principal: Principal = {
      kind: 'api_key',
      credentialId: 'test',
      userId: tenant.user.id,
      environment: 'sandbox',
      abilities: new Set(),
    } as unknown as Principal;
    // The subscription's own statements are its own; the feed's polls, shared by every subscriber, are not.
    const { span, result: stream } = await asRequest('GET /subscribe', () => {
      const stream = feed.subscribe(principal, undefined, undefined);
      void stream.next();
      return stream;
    });
    try {
      const polledBefore = polledUnder.length;
      await waitUntil(() => polledUnder.length >= polledBefore + 3, 20_000);
      expect(polledUnder.slice(polledBefore)).not.toContain(span.spanContext().spanId);
    } finally {
      await stream.return?.();
      feed.stop();
    }
  });

  it("the database probe started by a request's failure checks outside the request's trace", async () => {
    const health = new DependencyHealth(db(), { warn: () => undefined, info: () => undefined }, 10);
    const unreachable = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const { span } = await asRequest('POST /fails', () => health.reportDatabaseError(unreachable));
    expect(health.databaseState).toBe('down');
    await waitUntil(() => health.databaseState === 'up', 20_000);
    health.close();
    expect(startedAfter(span)).toEqual([]);
  });

  it("an idempotency key given back after the request runs its retries outside the request's trace", async () => {
    const tenant = await seedTenant(t.services);
    const unreachable = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    let refused = false;
    // The first give-back fails as on a lost database; the retries reach it.
    const flaky = new Proxy(db(), {
      get(target, property, receiver) {
        if (property === 'delete' && !refused) {
          refused = true;
          return () => ({ where: () => Promise.reject(unreachable) });
        }
        return Reflect.get(target, property, receiver);
      },
    });
    const idempotency = new Idempotency(flaky, systemClock, Buffer.alloc(32, 1));
    const scope = { userId: tenant.user.id, environment: 'sandbox' as const, operation: 'test' };
    const key = randomUUID();
    const { span } = await asRequest('POST /pay', () =>
      idempotency
        .run(scope, key, {}, async () => {
          throw new Error('the work failed');
        })
        .catch(() => undefined),
    );
    await waitUntil(async () => {
      const rows = await db()
        .select({ key: idempotencyKeys.key })
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.userId, tenant.user.id), eq(idempotencyKeys.key, key)));
      return refused && rows.length === 0;
    }, 20_000);
    expect(startedAfter(span)).toEqual([]);
  });

  // Keeps a stamped event from another file of this worker out of the relay's way.
  it('leaves no event unstamped', async () => {
    await stampCommittedEvents(db(), { wait: true });
    await untilIdle();
  });
});

const nanos = (time: HrTime) => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);

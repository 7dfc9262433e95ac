import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOperatorCommand } from '../../scripts/admin-operations.js';
import { loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { enqueueJob, JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { runDoctor } from '../../src/operations/doctor.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { heldJob } from '../helpers/jobs.js';
import { stampEvents } from '../helpers/events.js';

describe('operator commands', () => {
  const clock = new ManualClock(new Date());
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await createTestApp({ clock });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });
  const admin = (command: string, values: Record<string, string> = {}) =>
    runOperatorCommand(t.services, command, values).then((o) => o!.json as any);

  it('show queue depth per kind, list failed jobs with their error, retry and discard them', async () => {
    const kind = `ops-${crypto.randomUUID().slice(0, 8)}`;
    const now = clock.now();
    await enqueueJob(t.services.db, { kind, runAt: new Date(now.getTime() - 60_000), tenant: '' });
    await enqueueJob(t.services.db, { kind, runAt: new Date(now.getTime() + 60_000), tenant: '' });
    expect((await admin('queue')).find((d: { kind: string }) => d.kind === kind)).toEqual({
      kind,
      due: 1,
      scheduled: 1,
      running: 0,
      failed: 0,
      oldestDueSeconds: 60,
    });

    let runs = 0;
    const runner = new JobRunner(t.services.db, clock, [
      { kind, run: async () => (++runs === 1 ? { status: 'failed', error: 'upstream said no' } : { status: 'done' }) },
    ]);
    await runner.runDueJobs();
    const [failed] = await admin('failed-jobs', { kind });
    expect(failed).toMatchObject({ kind, attempts: 1, lastError: 'upstream said no' });
    expect((await admin('queue')).find((d: { kind: string }) => d.kind === kind)).toMatchObject({ due: 0, failed: 1 });

    expect(await admin('retry-job', { id: failed.id })).toEqual({ retried: 1 });
    expect(await runner.runDueJobs()).toBe(1);
    expect(runs).toBe(2);
    expect(await admin('failed-jobs', { kind })).toEqual([]);

    clock.advance(120_000);
    expect(await admin('discard-job', { kind })).toEqual({ discarded: 1 });
    expect((await admin('queue')).find((d: { kind: string }) => d.kind === kind)).toBeUndefined();
    await expect(admin('retry-job')).rejects.toThrow(/--id <job id> or --kind/);
  });

  it('list a failed webhook delivery with its last answer, and send it once more', async () => {
    clock.set(new Date());
    const tenant = await seedTenant(t.services);
    receiver.answer = () => 503;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { 'x-api-key': tenant.keys.ACCOUNT_MANAGEMENT },
      payload: { url: receiver.url, eventTypes: ['deposit.completed'] },
    });
    expect(created.statusCode).toBe(201);
    const event = await t.services.db.transaction((tx) =>
      recordEvent(
        tx,
        { type: 'deposit.completed', userId: tenant.user.id, environment: 'sandbox', data: {} },
        clock.now(),
      ),
    );
    // The relay writes the delivery when it stamps the event.
    await stampEvents(t.services.db, [event.id]);
    const [delivery] = await t.services.db
      .execute(
        sql`select d.id from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id where w.user_id = ${tenant.user.id}`,
      )
      .then((r) => (r as unknown as { rows: Array<{ id: string }> }).rows);
    const handler = new WebhookDeliveryHandler(t.services.db, clock, t.services.secrets);
    const attempt = async () =>
      handler.run(
        await heldJob(t.services.db, {
          payload: { deliveryId: delivery!.id },
          tenant: tenant.user.id,
          runAt: clock.now(),
        }),
      );
    // The first attempt and five retries, all refused: the delivery fails for good. Each comes
    // hours after the last, as the schedule has them, so the endpoint's breaker has closed again.
    for (let i = 0; i < 6; i++) {
      await attempt();
      clock.advance(7 * 3_600_000);
    }
    const listed = (await admin('failed-deliveries')).find((d: { id: string }) => d.id === delivery!.id);
    expect(listed).toMatchObject({ eventType: 'deposit.completed', lastStatusCode: 503, attempts: 6 });
    expect(listed.endpointHost).toBe(new URL(receiver.url).host);

    receiver.answer = () => 200;
    expect(await admin('retry-delivery', { id: delivery!.id })).toEqual({ retried: delivery!.id });
    await attempt();
    expect((await admin('failed-deliveries')).some((d: { id: string }) => d.id === delivery!.id)).toBe(false);
    await expect(admin('retry-delivery', { id: delivery!.id })).rejects.toThrow(/No failed webhook delivery/);
  });

  it('doctor says in plain words what is wrong', async () => {
    const healthy = await runDoctor(loadConfig({}, { NODE_ENV: 'test' }), t.services.db, clock.now());
    expect(healthy.find((c) => c.name === 'database')).toMatchObject({ ok: true });
    expect(healthy.find((c) => c.name === 'migrations')).toMatchObject({ ok: true });
    expect(healthy.find((c) => c.name === 'ledger (sandbox)')).toMatchObject({ ok: true });

    const production = await runDoctor(
      loadConfig({}, { NODE_ENV: 'production', SECRETS_KEY: `${'A'.repeat(43)}=`, REDIS_URL: 'redis://127.0.0.1:1' }),
      undefined,
      clock.now(),
      new Error('connect ECONNREFUSED 127.0.0.1:5432'),
    );
    const problems = Object.fromEntries(production.filter((c) => !c.ok).map((c) => [c.name, c.detail]));
    expect(problems['database setting']).toMatch(/Set DATABASE_URL/);
    expect(problems['public URL']).toMatch(/PUBLIC_URL is not set: .* say http:\/\/localhost:4000/);
    const withPublicUrl = await runDoctor(
      loadConfig({}, { NODE_ENV: 'production', SECRETS_KEY: `${'A'.repeat(43)}=`, PUBLIC_URL: 'https://pay.example' }),
      undefined,
      clock.now(),
      new Error('not opened'),
    );
    expect(withPublicUrl.find((c) => c.name === 'public URL')).toBeUndefined();
    // A demo account cannot be asked for in production: the configuration refuses it outright.
    expect(() =>
      loadConfig({}, { NODE_ENV: 'production', SECRETS_KEY: `${'A'.repeat(43)}=`, SEED_DEMO: true }),
    ).toThrow(/SEED_DEMO/);
    expect(problems['database']).toMatch(/could not be opened: connect ECONNREFUSED/);
    expect(problems['redis']).toMatch(/does not answer/);
  });
});

import { existsSync, mkdirSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import type { WebhookEndpoint } from '../../src/domain/webhooks/webhook.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
import { relayThenRunDue } from '../helpers/events.js';
import { signedInUser } from '../helpers/oauth-flow.js';
import { principalOf } from '../helpers/principal.js';
import { Receiver } from '../helpers/receiver.js';

const SHOTS = 'test-results/screenshots';

describe.skipIf(!existsSync(CHROMIUM))('the events page in headless Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let runner: JobRunner;
  let cookie: string;
  let userId: string;
  let first: WebhookEndpoint;
  let later: WebhookEndpoint;
  const firstReceiver = new Receiver();
  const laterReceiver = new Receiver();
  const reference = `DEP-events-${Date.now()}`;

  beforeAll(async () => {
    await Promise.all([firstReceiver.start(), laterReceiver.start()]);
    ({ t, baseUrl: base } = await startTestApp({ listen: true, isolated: true }));
    runner = new JobRunner(t.services.db, t.services.clock, [
      new WebhookDeliveryHandler(t.services.db, t.services.clock, t.services.secrets),
    ]);
    const signedIn = await signedInUser(t.services);
    cookie = signedIn.cookie;
    userId = signedIn.user.id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const context = await browser.newContext();
    const [name, value] = cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: base }]);
    page = await context.newPage();
    mkdirSync(SHOTS, { recursive: true });

    // An endpoint for every kind, then a deposit made with an API key: its events are fanned out
    // to that endpoint and delivered. The second endpoint comes after, so it never got them.
    first = (await t.services.webhooks.create(principalOf(userId), { url: firstReceiver.url })).endpoint;
    const { key } = await t.services.apiKeys.create({
      userId,
      name: 'checkout',
      environment: 'sandbox',
      permission: 'TRANSACTIONS',
    });
    const deposit = await fetch(`${base}/api/v1/wallet/deposits/bank-transfer`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 1200, reference }),
    });
    expect(deposit.status).toBe(201);
    await relayThenRunDue(t.services.db, runner);
    await firstReceiver.waitFor(1);
    later = (await t.services.webhooks.create(principalOf(userId), { url: laterReceiver.url })).endpoint;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([firstReceiver.stop(), laterReceiver.stop()]);
  });

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const texts = (selector: string) => page.locator(selector).allTextContents();
  const delivered = (receiver: Receiver) =>
    receiver.received.map((r) => JSON.parse(r.body) as { id: string; type: string });

  it('lists the events newest first and filters them by kind, each with its payload and where it went', async () => {
    await page.goto(`${base}/dashboard/events?env=sandbox`);
    const kinds = await texts('#events .kind');
    expect(kinds).toContain('deposit.initiated');
    expect(new Set(kinds).size).toBeGreaterThan(1);
    const positions = (await page.locator('#events .event').evaluateAll((rows) => rows.map((r) => r.dataset.seq))).map(
      Number,
    );
    expect(positions).toEqual([...positions].sort((a, b) => b - a));
    await shot('events');

    await page.selectOption('#f-kind', 'deposit.initiated');
    await Promise.all([page.waitForURL(/kind=deposit\.initiated/), page.click('#filter')]);
    expect(await texts('#events .kind')).toEqual(['deposit.initiated']);
    const payload = JSON.parse((await page.textContent('#events .payload'))!);
    expect(payload).toMatchObject({ reference, status: expect.any(String) });
    expect(await page.textContent('#events .delivery .endpoint')).toBe(first.url);
    expect(await page.textContent('#events .delivery .status')).toBe('succeeded');
    await shot('events-filtered');
  });

  it('shows every attempt on the event’s page and re-sends it to one endpoint through the delivery jobs', async () => {
    await page.click('#events .event-link');
    expect(await page.textContent('#event-kind')).toBe('deposit.initiated');
    const eventId = (await page.textContent('#event-id'))!;
    expect(delivered(firstReceiver).filter((e) => e.id === eventId)).toHaveLength(1);
    expect(await texts('#deliveries .attempt')).toEqual([expect.stringMatching(/^#1 200 · .+ UTC · \d+ ms$/)]);
    expect(await page.textContent('#deliveries .next-retry')).toBe('—');

    // To the endpoint added after the event: a new delivery, sent to that receiver only.
    const firstCount = firstReceiver.received.length;
    await page.selectOption('#f-endpoint', later.id);
    await page.click('#resend');
    expect(await page.textContent('#notice')).toContain('A new delivery is queued');
    expect(laterReceiver.received).toHaveLength(0);
    await runner.runDueJobs();
    await laterReceiver.waitFor(1);
    expect(delivered(laterReceiver)).toEqual([expect.objectContaining({ id: eventId, type: 'deposit.initiated' })]);
    expect(firstReceiver.received).toHaveLength(firstCount);
    await page.click('#refresh');
    const laterRow = page.locator(`#deliveries tr[data-endpoint="${later.id}"]`);
    expect(await laterRow.locator('.status').textContent()).toBe('succeeded');
    expect(await laterRow.locator('.attempt').allTextContents()).toEqual([expect.stringMatching(/^#1 200 /)]);

    // To the endpoint that had it: a second attempt of its delivery, marked as sent by hand.
    await page.selectOption('#f-endpoint', first.id);
    await page.click('#resend');
    expect(await page.textContent('#notice')).toContain('A new attempt of its delivery is queued');
    await runner.runDueJobs();
    await firstReceiver.waitFor(firstCount + 1);
    const again = firstReceiver.received.at(-1)!;
    expect(JSON.parse(again.body).id).toBe(eventId);
    expect(again.headers['webhook-id']).toBe(eventId);
    await page.click('#refresh');
    const firstRow = page.locator(`#deliveries tr[data-endpoint="${first.id}"]`);
    expect(await firstRow.locator('.attempt').allTextContents()).toEqual([
      expect.stringMatching(/^#1 200 /),
      expect.stringMatching(/^#2 200 .* re-sent by hand$/),
    ]);
    expect(laterReceiver.received).toHaveLength(1);
    await shot('event-deliveries');

    // The action needs the page's CSRF token, like every dashboard form.
    const forged = await fetch(`${base}/dashboard/events/${eventId}/resend`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ env: 'sandbox', endpointId: first.id }).toString(),
    });
    expect(forged.status).toBe(403);
    await runner.runDueJobs();
    expect(firstReceiver.received).toHaveLength(firstCount + 1);
  });

  it("answers another account's event like a missing one", async () => {
    const stranger = await signedInUser(t.services);
    const eventId = (await page.textContent('#event-id'))!;
    const answer = await fetch(`${base}/dashboard/events/${eventId}?env=sandbox`, {
      headers: { cookie: stranger.cookie },
    });
    expect(answer.status).toBe(404);
  });
});

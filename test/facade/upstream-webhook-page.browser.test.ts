import { createHmac, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpecUpstream } from '../fakes/spec-upstream.js';
import { graphql, type StartedTestApp, startTestApp } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

/**
 * A facade's set-up page, as a partner uses it in a browser: its upstream key proves the account,
 * the inbound URL comes first (to register upstream), then the secret and the read key are saved.
 */
describe.skipIf(!existsSync(CHROMIUM))('a facade’s upstream webhook page in headless Chromium', () => {
  let upstream: SpecUpstream;
  let facade: StartedTestApp;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    facade = await startTestApp({
      listen: true,
      config: { GATEWAY_MODE: 'facade', UPSTREAM_URL: upstream.url, UPSTREAM_ENVIRONMENT: 'sandbox' },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    page = await (await browser.newContext()).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await facade?.t.close();
    await upstream?.stop();
  });

  const submit = async (fields: { upstreamKey: string; secret?: string; readKey?: string }) => {
    await page.goto(`${facade.baseUrl}/facade/upstream-webhook`);
    await page.fill('#f-upstreamKey', fields.upstreamKey);
    if (fields.secret) await page.fill('#f-secret', fields.secret);
    if (fields.readKey) await page.fill('#f-readKey', fields.readKey);
    await Promise.all([page.waitForNavigation(), page.click('#submit')]);
  };

  it('shows the account’s inbound URL, then saves the secret and read key, and the upstream’s deliveries are taken', async () => {
    const { key } = upstream.addUser();
    await submit({ upstreamKey: key });
    const url = (await page.textContent('#inbound-url'))!;
    // PUBLIC_URL's origin (the test's default), then the account's path.
    expect(url).toMatch(/^http:\/\/localhost:4000\/webhooks\/upstream\/[0-9a-f-]{36}$/);
    expect(await page.textContent('#secret-state')).toMatch(/^not set/);
    // The same URL as the API gives the same account.
    const api = await graphql(facade.t.app, key, '{ upstreamWebhookReceiver { url } }');
    expect(api.body.data!.upstreamWebhookReceiver.url).toBe(url);

    const secret = `whsec_${randomUUID()}`;
    await submit({ upstreamKey: key, secret, readKey: key });
    expect(await page.textContent('#notice')).toMatch(/^Saved/);
    expect(await page.textContent('#secret-state')).toMatch(/^set \d{4}-/);
    expect(await page.textContent('#gap-fill-state')).toBe('read key set');
    // Nothing typed is shown back.
    expect(await page.content()).not.toContain(secret);
    expect(await page.content()).not.toContain(key);

    const body = JSON.stringify({
      id: `evt_${randomUUID()}`,
      type: 'payout.completed',
      created: Math.floor(Date.now() / 1000),
      data: {},
    });
    const delivered = await fetch(`${facade.baseUrl}${new URL(url).pathname}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': createHmac('sha256', secret).update(body).digest('hex'),
      },
      body,
    });
    expect(delivered.status).toBe(200);
  });

  it('refuses a key the upstream does not accept, and a read key of another account, saying which', async () => {
    await submit({ upstreamKey: 'sk_live_not_upstream' });
    expect(await page.textContent('#error')).toBe('The upstream does not accept this key.');
    expect(await page.locator('#receiver').count()).toBe(0);
    const { key } = upstream.addUser();
    const { key: othersKey } = upstream.addUser();
    await submit({ upstreamKey: key, secret: 'whsec_x', readKey: othersKey });
    expect(await page.textContent('#error')).toMatch(/^readKey must be an upstream API key of this account/);
    const api = await graphql(facade.t.app, key, '{ upstreamWebhookReceiver { secretSetAt } }');
    expect(api.body.data!.upstreamWebhookReceiver.secretSetAt).toBeNull();
  });
});

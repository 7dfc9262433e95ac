import { existsSync, mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { stampEvents } from '../helpers/events.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

describe.skipIf(!existsSync(CHROMIUM))('the GraphQL explorer in headless Chromium', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  beforeAll(async () => ({ t, tenant, baseUrl: base } = await startTestApp({ listen: true })));
  afterAll(() => t.close());

  it('loads from this server alone, takes a key and runs a query', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const foreign: string[] = [];
    try {
      const page = await browser.newPage();
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol !== 'data:' && url.host !== new URL(base).host) foreign.push(request.url());
      });
      await page.goto(`${base}/graphql`);
      expect(page.url()).toBe(`${base}/graphql/explorer/`);
      await page.waitForSelector('.graphiql-container', { timeout: 20_000 });
      await page.fill('#api-key', tenant.keys.READ_ONLY);
      await page.click('.graphiql-execute-button');
      await page.waitForFunction(
        (email) => (globalThis as any).document.querySelector('.result-window')?.textContent?.includes(email),
        tenant.user.email,
        { timeout: 20_000 },
      );
      mkdirSync('test-results/screenshots', { recursive: true });
      await page.screenshot({ path: 'test-results/screenshots/graphql-explorer.png' });
    } finally {
      await browser.close();
    }
    expect(foreign).toEqual([]);
  });

  it('runs a subscription over the WebSocket and shows the event it receives', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const sockets: string[] = [];
    try {
      const page = await browser.newPage();
      page.on('websocket', (socket) => sockets.push(socket.url()));
      await page.goto(`${base}/graphql/explorer/`);
      await page.waitForSelector('.graphiql-container', { timeout: 20_000 });
      await page.fill('#api-key', tenant.keys.READ_ONLY);
      await page.evaluate((query) => {
        const editor = (globalThis as any).document.querySelector('.graphiql-query-editor .CodeMirror');
        editor.CodeMirror.setValue(query);
      }, 'subscription { events(types: ["explorer.probe"]) { type data } }');
      // GraphiQL parses the edited document (which tells it to use the WebSocket) after a short debounce.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await page.click('.graphiql-execute-button');
      // The event is recorded only once the subscription is live (it starts "from now").
      await page.waitForFunction(() => (globalThis as any).document.querySelector('.graphiql-execute-button svg'));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const { id } = await recordEvent(
        t.services.db,
        { type: 'explorer.probe', userId: tenant.user.id, environment: 'sandbox', data: { marker: 'seen-in-browser' } },
        new Date(),
      );
      await stampEvents(t.services.db, [id]);
      t.services.doorbell.ring();
      await page.waitForFunction(
        () => (globalThis as any).document.querySelector('.result-window')?.textContent?.includes('seen-in-browser'),
        undefined,
        { timeout: 20_000 },
      );
      mkdirSync('test-results/screenshots', { recursive: true });
      await page.screenshot({ path: 'test-results/screenshots/graphql-explorer-subscription.png' });
    } finally {
      await browser.close();
    }
    expect(sockets).toEqual([`${base.replace(/^http/, 'ws')}/graphql`]);
  });
});

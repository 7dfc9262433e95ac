import { existsSync, mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
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
  }, 60_000);
});

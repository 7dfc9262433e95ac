import { existsSync, mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oauth from 'oauth4webapi';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { WebhookDeliveryHandler } from '../../src/domain/webhooks/delivery-worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { LocalHttpServer } from '../helpers/local-server.js';
import { Mailbox } from '../helpers/mailbox.js';
import { Receiver } from '../helpers/receiver.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
import { authorizationServerOf, insecure } from '../helpers/oauth-flow.js';

const SHOTS = 'test-results/screenshots';

/** A third-party app's redirect endpoint: remembers what the browser brought back. */
class Callback extends LocalHttpServer {
  readonly hits: URL[] = [];
  protected handle(req: IncomingMessage, res: ServerResponse): void {
    this.hits.push(new URL(req.url ?? '/', this.url));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="app">Back in the app</p>');
  }
}

describe.skipIf(!existsSync(CHROMIUM))('accounts, dashboard and Connect in headless Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let runner: JobRunner;
  const mailbox = new Mailbox();
  const receiver = new Receiver();
  const callback = new Callback();
  const email = `browser-${Date.now()}@example.test`;
  const foreign: string[] = [];

  beforeAll(async () => {
    await Promise.all([mailbox.start(), receiver.start(), callback.start()]);
    ({ t, baseUrl: base } = await startTestApp({ listen: true, isolated: true, config: { SMTP_URL: mailbox.url } }));
    runner = new JobRunner(t.services.db, t.services.clock, [
      new WebhookDeliveryHandler(t.services.db, t.services.clock, t.services.secrets),
    ]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    page = await browser.newPage();
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol !== 'data:' && url.host !== new URL(base).host && url.host !== new URL(callback.url).host)
        foreign.push(request.url());
    });
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([mailbox.stop(), receiver.stop(), callback.stop()]);
  });

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const followMail = async (subject: RegExp) => page.goto(base + Mailbox.linkIn(await mailbox.waitFor(email, subject)));

  async function signIn(password: string) {
    await page.goto(`${base}/signin`);
    await page.fill('#f-email', email);
    await page.fill('#f-password', password);
    await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('#sign-in')]);
  }

  it('signs up, confirms the email from the link, and signs in', async () => {
    await page.goto(`${base}/signup`);
    await page.fill('#f-email', email);
    await page.fill('#f-password', 'first long passphrase');
    await page.fill('#f-firstName', 'Amaka');
    await shot('sign-up');
    await page.click('#sign-up');
    await page.waitForSelector('#check-email');
    await followMail(/Confirm your email/);
    await page.click('#confirm-email');
    await page.waitForSelector('#verified');
    await signIn('first long passphrase');
    expect(await page.textContent('#account-email')).toContain(email);
    await shot('dashboard');
  });

  it('creates an API key and uses it against the API', async () => {
    await page.goto(`${base}/dashboard/keys`);
    await page.fill('#f-name', 'browser key');
    await page.selectOption('#f-permission', 'READ_ONLY');
    await page.click('#create-key');
    const key = (await page.textContent('#new-key'))!.trim();
    expect(key).toMatch(/^pgw_sbx_/);
    await shot('api-keys');
    const me = await fetch(`${base}/api/v1/user/me`, { headers: { 'x-api-key': key } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).data.email).toBe(email);
  });

  it('adds a webhook endpoint and sees a test delivery in the log', async () => {
    await page.goto(`${base}/dashboard/webhooks?env=sandbox`);
    await page.fill('#f-url', receiver.url);
    await page.click('#add-endpoint');
    const secret = (await page.textContent('#webhook-secret'))!.trim();
    expect(secret).toMatch(/^whsec_/);
    await page.click('#send-test');
    await page.waitForSelector('#notice');
    await runner.runDueJobs();
    await receiver.waitFor(1);
    expect(JSON.parse(receiver.received[0]!.body).type).toBe('webhook.test');
    await page.click('#refresh-log');
    expect(await page.textContent('#deliveries .status')).toBe('succeeded');
    expect(await page.textContent('#deliveries .attempt')).toMatch(/^#1 200/);
    await page.click('#reveal-secret');
    expect((await page.textContent('#webhook-secret'))!.trim()).toBe(secret);
    await shot('webhook-delivery-log');
  });

  it('runs Connect through the consent page to a token that calls /api/v1/user/me, then revokes the app', async () => {
    await page.goto(`${base}/dashboard/apps`);
    await page.fill('#f-name', 'Ledger Lens');
    await page.fill('#f-redirect', `${callback.url}/callback`);
    await page.click('#register-app');
    const clientId = (await page.textContent('#client-id'))!.trim();
    const clientSecret = (await page.textContent('#client-secret'))!.trim();
    await shot('developer-apps');

    // No PUBLIC_URL in development: the issuer is the origin the browser reached.
    const as = authorizationServerOf(base, base);
    const client: oauth.Client = { client_id: clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizeUrl = new URL(`${base}/connect/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: `${callback.url}/callback`,
      scope: 'read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })) {
      authorizeUrl.searchParams.set(k, v);
    }
    await page.goto(authorizeUrl.toString());
    expect(await page.textContent('#app-name')).toBe('Ledger Lens');
    expect(await page.textContent('#consent-account')).toBe(email);
    await shot('consent');
    await Promise.all([page.waitForURL(`${callback.url}/callback?**`), page.click('#approve')]);

    // The browser may also ask the app for /favicon.ico: take the callback itself.
    const params = oauth.validateAuthResponse(
      as,
      client,
      callback.hits.findLast((hit) => hit.pathname === '/callback')!,
      state,
    );
    const auth = oauth.ClientSecretBasic(clientSecret);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        `${callback.url}/callback`,
        verifier,
        insecure,
      ),
    );
    const me = () => fetch(`${base}/api/v1/user/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    const answer = await me();
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).data.email).toBe(email);

    await page.goto(`${base}/dashboard/connected-apps`);
    expect(await page.textContent('#connected-apps')).toContain('Ledger Lens');
    await shot('connected-apps');
    await page.click(`#revoke-${clientId}`);
    await page.waitForURL(`${base}/dashboard/connected-apps`);
    expect(await page.textContent('#connected-apps')).not.toContain('Ledger Lens');
    expect((await me()).status).toBe(401);
  });

  it('resets the password from the emailed link', async () => {
    await page.goto(`${base}/dashboard`);
    await page.click('#sign-out');
    await page.waitForURL(`${base}/signin`);
    await page.click('text=Forgot your password?');
    await page.fill('#f-email', email);
    await page.click('#send-reset');
    await page.waitForSelector('#check-email');
    await followMail(/Reset your/);
    await page.fill('#f-password', 'second long passphrase');
    await shot('reset-password');
    await page.click('#reset-password');
    await page.waitForSelector('#password-changed');
    await signIn('second long passphrase');
    expect(await page.textContent('#account-email')).toContain(email);
    expect(foreign).toEqual([]);
  });
});

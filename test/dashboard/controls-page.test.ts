import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyControls } from '../../src/db/controls-schema.js';
import { controlsFromText } from '../../src/domain/auth/key-controls-input.js';
import { NO_CONTROLS } from '../../src/domain/auth/key-controls.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormClient } from '../helpers/form-client.js';
import { signedInUser } from '../helpers/oauth-flow.js';

describe('dashboard: payout controls page', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { PAYOUT_COOLING_OFF_MINUTES: 60, PAYOUT_COOLING_OFF_CAP_KOBO: 500_000 } });
  });
  afterAll(() => t.close());

  it('shows the cooling-off and each key’s limits, and saves a key’s limits and allow-list with CSRF, audited', async () => {
    const { user, cookie } = await signedInUser(t.services);
    const { apiKey, key } = await t.services.apiKeys.create({
      userId: user.id,
      name: 'checkout server',
      environment: 'production',
      permission: 'FULL_ACCESS',
    });
    const client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);

    const page = await client.get('/dashboard/controls?env=production');
    expect(page.statusCode).toBe(200);
    expect(client.textOf('cooling-off')).toBe(
      'For 60 minutes after a bank account is added, payouts to it may total at most ₦5000.00.',
    );
    expect(page.body).toContain('checkout server');
    expect(page.body).toContain('placeholder="default: ₦5000000.00"');

    // Without the CSRF token the change is refused.
    const forged = await client.post(`/dashboard/controls/${apiKey.id}?env=production`, {
      _csrf: 'forged',
      maxPayout: '1',
    });
    expect(forged.statusCode).toBe(403);

    await client.get('/dashboard/controls?env=production');
    const saved = await client.post(`/dashboard/controls/${apiKey.id}?env=production`, {
      maxPayout: '2,500.50',
      maxDaily: '',
      maxDailyCount: '0',
      maxHourlyCount: '10',
      ipAllowList: '203.0.113.0/24\n2001:db8::1',
    });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Saved.');
    expect(await t.services.keyControls.of(t.services.db, apiKey.id)).toEqual({
      maxPayoutKobo: 250_050n,
      maxDailyKobo: null,
      maxDailyCount: 0,
      maxHourlyCount: 10,
      ipAllowList: ['203.0.113.0/24', '2001:db8::1/128'],
    });

    // A malformed key id in the URL is a missing key, not a database error.
    expect((await client.post('/dashboard/controls/not-a-key?env=production', { maxPayout: '1' })).statusCode).toBe(
      404,
    );
    await client.get('/dashboard/controls?env=production');
    const bad = await client.post(`/dashboard/controls/${apiKey.id}?env=production`, { ipAllowList: '10.0.0.0/40' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('is not an IPv4 or IPv6 address or CIDR');

    // Another user's key answers like a missing one.
    const other = await signedInUser(t.services);
    const stranger = new FormClient(t.app);
    stranger.cookies.set(name, other.cookie.split('=')[1]!);
    await stranger.get('/dashboard/controls?env=production');
    expect(
      (await stranger.post(`/dashboard/controls/${apiKey.id}?env=production`, { maxPayout: '1' })).statusCode,
    ).toBe(404);

    const { records } = await t.services.auditLog.list(
      { kind: 'session', credentialId: 'x', userId: user.id, environment: 'production', abilities: new Set() },
      { action: 'api_key.controls_changed' },
      10,
    );
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      actorKind: 'session',
      targetId: apiKey.id,
      changes: {
        maxPayoutKobo: { from: null, to: '250050' },
        maxDailyCount: { from: null, to: '0' },
        maxHourlyCount: { from: null, to: '10' },
        ipAllowList: { from: [], to: ['203.0.113.0/24', '2001:db8::1/128'] },
      },
    });
    expect(JSON.stringify(records)).not.toContain(key);
  });
});

describe('controls typed as text: thousands separators', () => {
  it('reads commas only as thousands separators, so 1,50 is refused rather than read as ₦150', () => {
    const of = (maxPayout: string) => controlsFromText({ maxPayout }, NO_CONTROLS).maxPayoutKobo;
    expect(of('2,500.50')).toBe(250_050n);
    expect(of('1,000,000')).toBe(100_000_000n);
    expect(of('2500')).toBe(250_000n);
    for (const bad of ['1,50', '1,5', ',', '5,,', ',500', '1,0000', '12,34,567'])
      expect(() => of(bad), bad).toThrow(/maxPayout must be an amount in naira/);
  });
});

describe('dashboard: a controls form that leaves fields out', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('keeps the fields it did not send, clears only those sent blank, and refuses an allow-list of everyone', async () => {
    const { user, cookie } = await signedInUser(t.services);
    const { apiKey } = await t.services.apiKeys.create({
      userId: user.id,
      name: 'partial form',
      environment: 'production',
      permission: 'FULL_ACCESS',
    });
    const set = {
      maxPayoutKobo: 100_000n,
      maxDailyKobo: 500_000n,
      maxDailyCount: 5,
      maxHourlyCount: 2,
      ipAllowList: ['203.0.113.0/24'],
    };
    await t.services.keyControls.set(user.id, apiKey.id, set);
    const client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);
    const post = async (form: Record<string, string>) => {
      await client.get('/dashboard/controls?env=production');
      return client.post(`/dashboard/controls/${apiKey.id}?env=production`, form);
    };
    const controls = () => t.services.keyControls.of(t.services.db, apiKey.id);

    expect((await post({ maxPayout: '2000' })).statusCode).toBe(200);
    expect(await controls()).toEqual({ ...set, maxPayoutKobo: 200_000n });
    expect((await post({ ipAllowList: '198.51.100.0/24' })).statusCode).toBe(200);
    expect(await controls()).toEqual({ ...set, maxPayoutKobo: 200_000n, ipAllowList: ['198.51.100.0/24'] });

    const everyone = await post({ ipAllowList: '0.0.0.0/0' });
    expect(everyone.statusCode).toBe(400);
    expect(everyone.body).toContain('an empty list already allows every address');
    expect((await controls()).ipAllowList).toEqual(['198.51.100.0/24']);

    // Sent blank: cleared (the list) or back to the default (a limit).
    expect((await post({ ipAllowList: '', maxDailyCount: '' })).statusCode).toBe(200);
    expect(await controls()).toEqual({ ...set, maxPayoutKobo: 200_000n, maxDailyCount: null, ipAllowList: [] });
  });

  it('saves only the fields edited on the page: a change made elsewhere since it was drawn is kept', async () => {
    const { user, cookie } = await signedInUser(t.services);
    const { apiKey } = await t.services.apiKeys.create({
      userId: user.id,
      name: 'two tabs',
      environment: 'production',
      permission: 'FULL_ACCESS',
    });
    await t.services.keyControls.set(user.id, apiKey.id, { ...NO_CONTROLS, ipAllowList: ['203.0.113.0/24'] });
    const client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);
    // The page as drawn: every field with the value it showed, as a browser submits it.
    const page = await client.get('/dashboard/controls?env=production');
    expect(page.body).toContain('name="was_ipAllowList" value="203.0.113.0/24"');
    expect(page.body).toContain('name="was_maxDailyCount" value=""');
    const shown = {
      maxPayout: '',
      maxDaily: '',
      maxDailyCount: '',
      maxHourlyCount: '',
      ipAllowList: '203.0.113.0/24',
    };
    const asDrawn = Object.fromEntries(Object.entries(shown).map(([field, text]) => [`was_${field}`, text]));
    // Meanwhile another save (a second tab, the admin CLI) sets a daily count and narrows the list.
    await t.services.keyControls.set(user.id, apiKey.id, {
      ...NO_CONTROLS,
      maxDailyCount: 5,
      ipAllowList: ['203.0.113.8/29'],
    });
    // This page edits the per-payout limit only; the textarea comes back with CRLF line breaks.
    const saved = await client.post(`/dashboard/controls/${apiKey.id}?env=production`, {
      ...shown,
      ...asDrawn,
      maxPayout: '2000',
      ipAllowList: '203.0.113.0/24\r\n',
    });
    expect(saved.statusCode).toBe(200);
    expect(await t.services.keyControls.of(t.services.db, apiKey.id)).toEqual({
      ...NO_CONTROLS,
      maxPayoutKobo: 200_000n,
      maxDailyCount: 5,
      ipAllowList: ['203.0.113.8/29'],
    });
  });
});

describe('dashboard: a key whose stored allow-list predates the bounds', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('flags the list, saves the other controls with the list re-sent as shown, and checks a changed list', async () => {
    const { user, cookie } = await signedInUser(t.services);
    const { apiKey } = await t.services.apiKeys.create({
      userId: user.id,
      name: 'old list',
      environment: 'production',
      permission: 'FULL_ACCESS',
    });
    // Saved before the bounds: today's service would refuse it.
    const stored = ['0.0.0.0/1', '203.0.113.0/24'];
    await t.services.db.insert(apiKeyControls).values({ apiKeyId: apiKey.id, ipAllowList: stored });
    const client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);
    const controls = () => t.services.keyControls.of(t.services.db, apiKey.id);

    const page = await client.get('/dashboard/controls?env=production');
    expect(client.textOf(`allow-list-warning-${apiKey.id}`)).toContain(
      '0.0.0.0/1&quot; is too broad: IPv4 entries may be /8 or narrower.',
    );
    // The form as the browser sends it: every field, the allow-list as the textarea shows it.
    const shown = page.body.match(/name="ipAllowList"[^>]*>([^<]*)<\/textarea>/)![1]!;
    expect(shown).toBe(stored.join('\n'));
    const saved = await client.post(`/dashboard/controls/${apiKey.id}?env=production`, {
      maxPayout: '1500',
      maxDaily: '',
      maxDailyCount: '',
      maxHourlyCount: '',
      ipAllowList: shown,
    });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Saved.');
    expect(await controls()).toEqual({ ...NO_CONTROLS, maxPayoutKobo: 150_000n, ipAllowList: stored });
    // Still flagged: the list is the owner's to narrow.
    expect(saved.body).toContain(`id="allow-list-warning-${apiKey.id}"`);

    await client.get('/dashboard/controls?env=production');
    const widened = await client.post(`/dashboard/controls/${apiKey.id}?env=production`, {
      ipAllowList: `${shown}\n10.0.0.0/2`,
    });
    expect(widened.statusCode).toBe(400);
    expect(widened.body).toContain('is too broad: IPv4 entries may be /8 or narrower.');
    expect((await controls()).ipAllowList).toEqual(stored);

    await client.get('/dashboard/controls?env=production');
    expect(
      (await client.post(`/dashboard/controls/${apiKey.id}?env=production`, { ipAllowList: '203.0.113.0/24' }))
        .statusCode,
    ).toBe(200);
    expect((await controls()).ipAllowList).toEqual(['203.0.113.0/24']);
    expect((await client.get('/dashboard/controls?env=production')).body).not.toContain('allow-list-warning-');
  });
});

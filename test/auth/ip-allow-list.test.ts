import { eq } from 'drizzle-orm';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { apiKeyControls } from '../../src/db/controls-schema.js';
import { NO_CONTROLS } from '../../src/domain/auth/key-controls.js';
import { graphQLExtensions, restErrorReply } from '../../src/domain/error-mapping.js';
import type { DomainError } from '../../src/domain/errors.js';
import {
  allowListProblem,
  checkBreadth,
  IpAllowList,
  parseAllowList,
  parseAllowListOver,
} from '../../src/domain/auth/ip-allow-list.js';
import { type StartedTestApp, startTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

describe('IP allow-list: parsing and matching', () => {
  it('normalises addresses and CIDRs of both families and refuses anything else, naming the entry', () => {
    expect(parseAllowList('203.0.113.0/24, 198.51.100.7\n2001:DB8::/32 ::1')).toEqual([
      '203.0.113.0/24',
      '198.51.100.7/32',
      '2001:db8::/32',
      '::1/128',
    ]);
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0/8', '::1/129', '1.2.3.4/8/1', '1.2.3.4/x'])
      expect(() => parseAllowList(bad)).toThrow(/is not an IPv4 or IPv6 address or CIDR/);
    const list = new IpAllowList(parseAllowList('203.0.113.0/24 2001:db8::/32'));
    expect(list.admits('203.0.113.200')).toBe(true);
    expect(list.admits('::ffff:203.0.113.9')).toBe(true);
    expect(list.admits('2001:db8:1::5')).toBe(true);
    expect(list.admits('203.0.114.1')).toBe(false);
    expect(list.admits('2001:db9::1')).toBe(false);
    expect(list.admits('unknown')).toBe(false);
  });
});

describe('IP allow-list: IPv4-mapped entries', () => {
  it('reads ::ffff:a.b.c.d/n as the IPv4 range it names and refuses a mapped prefix shorter than /96', () => {
    expect(parseAllowList('::ffff:203.0.113.7 ::FFFF:10.0.0.0/104')).toEqual(['203.0.113.7/32', '10.0.0.0/8']);
    // ::ffff:1.2.3.4/8 would cover every IPv4 address (and ::1): a typo must not let everyone in.
    for (const bad of ['::ffff:1.2.3.4/8', '::ffff:1.2.3.4/95'])
      expect(() => parseAllowList(bad)).toThrow(/is not an IPv4 or IPv6 address or CIDR/);
    const list = new IpAllowList(parseAllowList('::ffff:10.0.0.0/104'));
    expect(list.admits('10.1.2.3')).toBe(true);
    expect(list.admits('11.1.2.3')).toBe(false);
  });
});

describe('IP allow-list: zone ids', () => {
  it('refuses an IPv6 entry with a zone id, whose interface the match would ignore', () => {
    for (const bad of ['fe80::1%eth0', `fe80::1%${'x'.repeat(5000)}/64`])
      expect(() => parseAllowList(bad)).toThrow(/is not an IPv4 or IPv6 address or CIDR/);
  });
});

describe('IP allow-list: entries that allow every address', () => {
  it('refuses 0.0.0.0/0, ::/0, ::ffff:0.0.0.0/96 and other lists covering a whole family, naming the field', () => {
    for (const everyone of [
      '0.0.0.0/0',
      '203.0.113.7/0',
      '::/0',
      '::ffff:0.0.0.0/96',
      '::ffff:0:0/96',
      // ::/64 holds ::ffff:0:0/96, so every IPv4 client matches it.
      '::/64',
      '0.0.0.0/1 128.0.0.0/1',
      '::/1, 8000::/1',
      '0.0.0.0/1 ::ffff:128.0.0.0/97',
      '2001:db8::/32 0.0.0.0/0',
    ]) {
      let error: unknown;
      try {
        parseAllowList(everyone);
      } catch (e) {
        error = e;
      }
      expect(error, everyone).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'ipAllowList',
        message: expect.stringMatching(
          /^ipAllowList: .* allow every IPv[46].*; an empty list already allows every address\.$/,
        ),
      });
    }
    // As REST and GraphQL answer it: 400 naming the field.
    const refusal = (() => {
      try {
        parseAllowList('0.0.0.0/0');
      } catch (e) {
        return e as DomainError;
      }
      throw new Error('not refused');
    })();
    expect(restErrorReply(refusal)).toMatchObject({
      status: 400,
      body: { statusCode: 400, details: [{ field: 'ipAllowList' }] },
    });
    expect(graphQLExtensions(refusal)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ipAllowList' });
    expect(parseAllowList('')).toEqual([]);
  });
});

describe('IP allow-list: entries broader than the bound', () => {
  const refusalOf = (run: () => unknown): DomainError => {
    try {
      run();
    } catch (e) {
      return e as DomainError;
    }
    throw new Error('not refused');
  };

  it('refuses an IPv4 entry shorter than /8 and an IPv6 one shorter than /32, naming the field, the entry and the bound', () => {
    for (const [typed, bound] of [
      ['0.0.0.0/1', 'IPv4 entries may be /8 or narrower'],
      ['10.0.0.0/2', 'IPv4 entries may be /8 or narrower'],
      ['10.0.0.0/7', 'IPv4 entries may be /8 or narrower'],
      ['2000::/3', 'IPv6 entries may be /32 or narrower'],
      ['2001:db8::/31', 'IPv6 entries may be /32 or narrower'],
      // An IPv4-mapped entry is judged as the IPv4 range it names.
      ['::ffff:0.0.0.0/97', 'IPv4 entries may be /8 or narrower'],
      ['::ffff:10.0.0.0/103', 'IPv4 entries may be /8 or narrower'],
      // Teredo tunnels any IPv4 host into 2001::/32: only single addresses there.
      ['2001::/32', 'Teredo entries (2001::/32) tunnel any IPv4 host and may only be single addresses'],
      ['2001:0:4136:e378::/64', 'Teredo entries (2001::/32) tunnel any IPv4 host and may only be single addresses'],
    ] as const) {
      const refusal = refusalOf(() => parseAllowList(`203.0.113.0/24 ${typed}`));
      expect(refusal, typed).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'ipAllowList',
        message: `ipAllowList: ${JSON.stringify(typed)} is too broad: ${bound}.`,
      });
      expect(restErrorReply(refusal)).toMatchObject({
        status: 400,
        body: { statusCode: 400, details: [{ field: 'ipAllowList', message: refusal.message }] },
      });
      expect(graphQLExtensions(refusal)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ipAllowList' });
    }
    // A list stored un-normalised (IPv6 spelling of a mapped range) is judged as IPv4 too.
    expect(refusalOf(() => checkBreadth(['::ffff:0:0/100'])).message).toBe(
      'ipAllowList: "::ffff:0:0/100" is too broad: IPv4-mapped entries are judged as IPv4 and may be /8 (::ffff:0:0/104) or narrower.',
    );
    expect(() => checkBreadth(['::ffff:a00:0/104'])).not.toThrow();
    // At the bound, and narrower, entries are kept.
    expect(
      parseAllowList('10.0.0.0/8 2001:db8::/32 ::ffff:10.0.0.0/104 2001:db8::/48 2001:0:4136:e378:8000:63bf:3fff:fdd2'),
    ).toEqual(['10.0.0.0/8', '2001:db8::/32', '2001:db8::/48', '2001:0:4136:e378:8000:63bf:3fff:fdd2/128']);
    // A list of everyone keeps its own refusal.
    expect(refusalOf(() => parseAllowList('0.0.0.0/0')).message).toMatch(/allow every IPv4 address/);
  });

  it('keeps a stored list that predates the bound when it is typed again unchanged, and checks any other list', () => {
    const stored = ['0.0.0.0/1', '2001:db8::/32'];
    expect(parseAllowListOver('2001:db8::/32\n0.0.0.0/1', stored)).toEqual(stored);
    expect(parseAllowListOver('0.0.0.0/1, 2001:db8::/32, 0.0.0.0/1', stored)).toEqual(stored);
    expect(() => parseAllowListOver('0.0.0.0/1', stored)).toThrow(/"0.0.0.0\/1" is too broad/);
    expect(parseAllowListOver('203.0.113.0/24', stored)).toEqual(['203.0.113.0/24']);
    expect(parseAllowListOver('', stored)).toEqual([]);
    // The format is still checked.
    expect(() => parseAllowListOver('0.0.0.0/1 2001:db8::/32 nonsense', stored)).toThrow(/is not an IPv4 or IPv6/);
    expect(allowListProblem(stored)).toMatch(/"0.0.0.0\/1" is too broad/);
    expect(allowListProblem(['203.0.113.0/24'])).toBeUndefined();
  });
});

describe('IP allow-list on a production key', () => {
  let s: StartedTestApp;
  let keyId: string;
  beforeAll(async () => {
    // Requests from 127.0.0.1 (the test's own proxy) have their X-Forwarded-For believed.
    s = await startTestApp({ listen: true, config: { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_PER_MINUTE: 100_000 } });
    keyId = (await s.t.services.apiKeys.list(s.tenant.user.id)).find((k) => k.environment === 'production')!.id;
    await s.t.services.keyControls.set(s.tenant.user.id, keyId, {
      ...NO_CONTROLS,
      ipAllowList: parseAllowList('203.0.113.0/24 2001:db8::/32'),
    });
  });
  afterAll(() => s.t.close());

  const restFrom = (remoteAddress: string, forwardedFor?: string) =>
    s.t.app.inject({
      method: 'GET',
      url: '/api/v1/api-keys',
      remoteAddress,
      headers: { 'x-api-key': s.tenant.productionKey, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    });

  it('refuses REST requests from other addresses with 403 IP_NOT_ALLOWED, not echoing the list, and serves listed ones', async () => {
    const refused = await restFrom('198.51.100.1');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      errorCode: 'IP_NOT_ALLOWED',
      message: "This API key may not be used from this address (the key's IP allow-list).",
    });
    expect(refused.body).not.toContain('203.0.113');
    expect((await restFrom('203.0.113.7')).statusCode).toBe(200);
    expect((await restFrom('2001:db8::42')).statusCode).toBe(200);
    // The sandbox key of the same user has no list.
    const sandbox = await s.t.app.inject({
      method: 'GET',
      url: '/api/v1/api-keys',
      remoteAddress: '198.51.100.1',
      headers: { 'x-api-key': s.tenant.keys.FULL_ACCESS },
    });
    expect(sandbox.statusCode).toBe(200);
  });

  it('believes X-Forwarded-For from a trusted proxy only', async () => {
    expect((await restFrom('127.0.0.1', '203.0.113.7')).statusCode).toBe(200);
    expect((await restFrom('127.0.0.1', '198.51.100.1')).statusCode).toBe(403);
    // An untrusted peer cannot claim a listed address.
    expect((await restFrom('198.51.100.1', '203.0.113.7')).statusCode).toBe(403);
  });

  it('refuses GraphQL requests from other addresses with extensions.code IP_NOT_ALLOWED', async () => {
    const from = (remoteAddress: string) =>
      s.t.app.inject({
        method: 'POST',
        url: '/graphql',
        remoteAddress,
        headers: { 'content-type': 'application/json', 'x-api-key': s.tenant.productionKey },
        payload: { query: '{ apiKeys { id } }' },
      });
    const refused = (await from('198.51.100.1')).json();
    expect(refused.errors[0].extensions).toMatchObject({ code: 'IP_NOT_ALLOWED', http: { status: 403 } });
    expect(JSON.stringify(refused)).not.toContain('203.0.113');
    const served = (await from('203.0.113.7')).json();
    expect(served.errors).toBeUndefined();
    expect(served.data.apiKeys.length).toBeGreaterThan(0);
  });

  it('refuses a WebSocket connection_init from an address not listed (4403), and accepts one that is', async () => {
    const connect = (forwardedFor: string) =>
      new Promise<number | 'connected'>((resolve) => {
        const client = createClient({
          url: s.wsUrl,
          retryAttempts: 0,
          lazy: false,
          onNonLazyError: () => undefined,
          connectionParams: { apiKey: s.tenant.productionKey },
          webSocketImpl: class extends WebSocket {
            constructor(url: string, protocols: string[]) {
              super(url, protocols, { headers: { 'x-forwarded-for': forwardedFor } });
            }
          },
          on: {
            connected: () => {
              resolve('connected');
              void client.dispose();
            },
            closed: (event) => resolve((event as { code: number }).code),
          },
        });
      });
    expect(await connect('198.51.100.1')).toBe(4403);
    expect(await connect('203.0.113.7')).toBe('connected');
  });

  it('closes a live WebSocket connection once its address leaves the list', async () => {
    let closedWith: number | undefined;
    let connected = false;
    const client = createClient({
      url: s.wsUrl,
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => undefined,
      connectionParams: { apiKey: s.tenant.productionKey },
      webSocketImpl: class extends WebSocket {
        constructor(url: string, protocols: string[]) {
          super(url, protocols, { headers: { 'x-forwarded-for': '203.0.113.8' } });
        }
      },
      on: {
        connected: () => (connected = true),
        closed: (event) => (closedWith = (event as { code: number }).code),
      },
    });
    await waitUntil(() => connected);
    await s.t.services.keyControls.set(s.tenant.user.id, keyId, { ...NO_CONTROLS, ipAllowList: ['2001:db8::/32'] });
    await waitUntil(() => closedWith !== undefined, 5000);
    expect(closedWith).toBe(4401);
    await client.dispose();
    await s.t.services.keyControls.set(s.tenant.user.id, keyId, {
      ...NO_CONTROLS,
      ipAllowList: parseAllowList('203.0.113.0/24 2001:db8::/32'),
    });
  });

  it('refuses an allow-list of everyone in the controls service whatever the caller, and the key keeps its list', async () => {
    const before = (await s.t.services.keyControls.of(s.t.services.db, keyId)).ipAllowList;
    for (const everyone of [['0.0.0.0/0'], ['::/0'], ['0.0.0.0/1', '128.0.0.0/1']])
      await expect(
        s.t.services.keyControls.set(s.tenant.user.id, keyId, { ...NO_CONTROLS, ipAllowList: everyone }),
      ).rejects.toMatchObject({ code: 'BAD_USER_INPUT', field: 'ipAllowList' });
    expect((await s.t.services.keyControls.of(s.t.services.db, keyId)).ipAllowList).toEqual(before);
    expect((await restFrom('198.51.100.1')).statusCode).toBe(403);
  });

  it('applies a changed list at once, and records the change in the audit trail', async () => {
    await s.t.services.keyControls.set(s.tenant.user.id, keyId, { ...NO_CONTROLS, ipAllowList: ['198.51.100.0/24'] });
    // This process evicts the key's cached principal on the change: the next request sees the new list.
    expect((await restFrom('198.51.100.1')).statusCode).toBe(200);
    expect((await restFrom('203.0.113.7')).statusCode).toBe(403);
    const {
      records: [latest],
    } = await s.t.services.auditLog.list(
      { kind: 'session', credentialId: 'x', userId: s.tenant.user.id, environment: 'production', abilities: new Set() },
      { action: 'api_key.controls_changed' },
      1,
    );
    expect(latest).toMatchObject({ targetId: keyId, changes: { ipAllowList: { to: ['198.51.100.0/24'] } } });
  });

  it('lets the other controls of a key whose stored list predates the bounds change, keeping that list; a new list is checked', async () => {
    const { keyControls, db } = s.t.services;
    // Saved before the bounds existed: a near-catch-all next to a real range.
    const stored = ['0.0.0.0/1', '198.51.100.0/24'];
    await db
      .update(apiKeyControls)
      .set({ ipAllowList: stored, maxPayoutKobo: null })
      .where(eq(apiKeyControls.apiKeyId, keyId));
    s.t.services.apiKeys.forget(keyId);
    const current = await keyControls.of(db, keyId);
    expect(current.ipAllowList).toEqual(stored);

    // The edit re-submits the stored list (as the dashboard and the CLI do), in any order.
    const saved = await keyControls.set(s.tenant.user.id, keyId, {
      ...current,
      maxPayoutKobo: 500_000n,
      ipAllowList: [...stored].reverse(),
    });
    expect(saved.maxPayoutKobo).toBe(500_000n);
    expect(await keyControls.of(db, keyId)).toMatchObject({ maxPayoutKobo: 500_000n });
    expect(new Set((await keyControls.of(db, keyId)).ipAllowList)).toEqual(new Set(stored));

    // Any other list is checked, and the stored one stays.
    for (const next of [['0.0.0.0/1'], ['10.0.0.0/2', '198.51.100.0/24'], [...stored, '2000::/3']])
      await expect(keyControls.set(s.tenant.user.id, keyId, { ...current, ipAllowList: next })).rejects.toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'ipAllowList',
        message: /is too broad/,
      });
    expect(new Set((await keyControls.of(db, keyId)).ipAllowList)).toEqual(new Set(stored));
    await keyControls.set(s.tenant.user.id, keyId, { ...current, ipAllowList: ['198.51.100.0/24'] });
    expect((await keyControls.of(db, keyId)).ipAllowList).toEqual(['198.51.100.0/24']);

    // A stored catch-all is kept the same way when the edit leaves it as it is.
    await db
      .update(apiKeyControls)
      .set({ ipAllowList: ['::/0'] })
      .where(eq(apiKeyControls.apiKeyId, keyId));
    const withCatchAll = await keyControls.of(db, keyId);
    await keyControls.set(s.tenant.user.id, keyId, { ...withCatchAll, maxDailyCount: 3 });
    expect(await keyControls.of(db, keyId)).toMatchObject({ maxDailyCount: 3, ipAllowList: ['::/0'] });
    await keyControls.set(s.tenant.user.id, keyId, { ...withCatchAll, ipAllowList: ['198.51.100.0/24'] });
  });
});

import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { apiKeyStore } from '../../src/domain/auth/api-key-store.js';
import { PERMISSION_LEVELS } from '../../src/domain/auth/permissions.js';
import { startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { waitUntil as until } from '../helpers/wait.js';

const SOCKETS_PER_KEY = 4;

/**
 * Live sockets' credentials are checked again every second: however many sockets and keys an
 * instance holds, that is one read of the keys per second, not one per key (nor per socket).
 */
describe('the live sockets’ credential re-check', () => {
  let t: TestApp;
  let tenant: Tenant;
  let url: string;
  // Nothing trusted from memory: every re-check reads every key it holds.
  beforeAll(
    async () => ({ t, tenant, wsUrl: url } = await startTestApp({ listen: true, config: { API_KEY_CACHE_MS: 0 } })),
  );
  afterAll(() => t.close());

  /** When each read of the keys table was sent (its writes, the last-used stamps, left out). */
  function countKeyReads() {
    const client = (t.services.db as unknown as { $client: { query: (...args: unknown[]) => unknown } }).$client;
    const original = client.query;
    const reads: number[] = [];
    client.query = function (this: unknown, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
      if (/^\s*select\b/i.test(text) && text.includes('"api_keys"')) reads.push(performance.now());
      return original.apply(this, args);
    };
    return { reads, stop: () => (client.query = original) };
  }

  /** The reads grouped by re-check: a re-check sends its reads at once, a second after the last. */
  const byRecheck = (reads: number[]) => {
    const groups: number[] = [];
    let last = Number.NEGATIVE_INFINITY;
    for (const at of reads) {
      if (at - last > 300) groups.push(0);
      groups[groups.length - 1]! += 1;
      last = at;
    }
    return groups;
  };

  function open(key: string) {
    let closedWith: number | undefined;
    const client: Client = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': key },
      retryAttempts: 0,
      on: { closed: (event) => (closedWith = (event as { code: number }).code) },
    });
    client.subscribe(
      { query: 'subscription { events { id } }' },
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    return { client, closed: () => closedWith };
  }

  it('reads every key its sockets hold in one statement a second, and still closes a revoked key’s sockets with 4401', async () => {
    const keys = PERMISSION_LEVELS.map((level) => tenant.keys[level]);
    expect(keys.length).toBeGreaterThan(1);
    const before = t.services.eventFeed.subscriberCount;
    const sockets = keys.map((key) => Array.from({ length: SOCKETS_PER_KEY }, () => open(key)));
    try {
      await until(() => t.services.eventFeed.subscriberCount === before + keys.length * SOCKETS_PER_KEY);
      const counting = countKeyReads();
      try {
        // Three whole re-checks after the first one seen (which may have begun before counting).
        await until(() => byRecheck(counting.reads).length >= 4);
        expect(byRecheck(counting.reads).slice(1, 4)).toEqual([1, 1, 1]);
      } finally {
        counting.stop();
      }

      // Revoked behind this instance's back (another instance, the admin CLI): the re-check reads it
      // as missing and closes that key's sockets, and only those.
      const [revokedKey] = (await t.services.apiKeys.list(tenant.user.id)).filter(
        (k) => k.permission === PERMISSION_LEVELS[0],
      );
      await apiKeyStore.revokeApiKey(t.services.db, revokedKey!.id, new Date());
      await until(() => sockets[0]!.every((socket) => socket.closed() !== undefined));
      for (const socket of sockets[0]!) expect(socket.closed()).toBe(4401);
      for (const socket of sockets.slice(1).flat()) expect(socket.closed()).toBeUndefined();
    } finally {
      await Promise.all(sockets.flat().map((socket) => socket.client.dispose()));
    }
  });
});

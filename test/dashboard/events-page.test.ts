import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { EVENTS_PER_PAGE } from '../../src/dashboard/events-page.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { stampAll } from '../helpers/events.js';
import { FormClient } from '../helpers/form-client.js';
import { signedInUser } from '../helpers/oauth-flow.js';

describe('dashboard: events page over HTTP', () => {
  let t: TestApp;
  let client: FormClient;
  beforeAll(async () => {
    t = await createTestApp();
    const { user, cookie } = await signedInUser(t.services);
    client = new FormClient(t.app);
    const [name, value] = cookie.split('=') as [string, string];
    client.cookies.set(name, value);
    for (let n = 1; n <= EVENTS_PER_PAGE + 2; n++)
      await recordEvent(
        t.services.db,
        {
          type: n % 2 ? 'payout.completed' : 'deposit.completed',
          userId: user.id,
          environment: 'sandbox',
          data: { n },
        },
        t.services.clock.now(),
      );
    await stampAll(t.services.db);
  });
  afterAll(() => t.close());

  const numbersOn = (body: string) =>
    [...body.matchAll(/<code class="payload"[^>]*>\{&quot;n&quot;:(\d+)\}<\/code>/g)].map((m) => Number(m[1]));
  const hrefOf = (body: string, id: string) =>
    body.match(new RegExp(`<a href="([^"]+)" id="${id}"`))?.[1]?.replace(/&amp;/g, '&');

  it('pages from the newest to the oldest, and back to the newest', async () => {
    const first = await client.get('/dashboard/events?env=sandbox');
    expect(first.statusCode).toBe(200);
    const newest = Array.from({ length: EVENTS_PER_PAGE }, (_, i) => EVENTS_PER_PAGE + 2 - i);
    expect(numbersOn(first.body)).toEqual(newest);
    expect(hrefOf(first.body, 'newest')).toBeUndefined();
    const older = await client.get(hrefOf(first.body, 'older')!);
    expect(numbersOn(older.body)).toEqual([2, 1]);
    expect(hrefOf(older.body, 'older')).toBeUndefined();
    expect(numbersOn((await client.get(hrefOf(older.body, 'newest')!)).body)).toEqual(newest);
  });

  it('filters by kind; an unknown kind shows every kind and never reaches the page as markup', async () => {
    const deposits = await client.get('/dashboard/events?env=sandbox&kind=deposit.completed');
    expect(numbersOn(deposits.body)).toEqual([26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2]);
    expect(deposits.body).toContain('<option value="deposit.completed" selected>');
    const unknown = await client.get('/dashboard/events?env=sandbox&kind=%3Cscript%3E');
    expect(numbersOn(unknown.body)).toHaveLength(EVENTS_PER_PAGE);
    expect(unknown.body).not.toContain('<script>');
  });

  it('answers a malformed page position or a missing endpoint as the client’s mistake, never a 5xx', async () => {
    for (const before of ['abc', '-1', '1e400', '0.5']) {
      const bad = await client.get(`/dashboard/events?env=sandbox&before=${before}`);
      expect(bad.statusCode).toBe(400);
      expect(client.textOf('error')).toBe('before must be a positive integer from an earlier page.');
    }
    expect((await client.get('/dashboard/events/not-an-event?env=sandbox')).statusCode).toBe(404);
    const page = await client.get('/dashboard/events?env=sandbox');
    const eventId = page.body.match(/class="event-link">([0-9a-f-]{36})</)![1]!;
    await client.get(`/dashboard/events/${eventId}?env=sandbox`);
    const noEndpoint = await client.post(`/dashboard/events/${eventId}/resend`, { env: 'sandbox', endpointId: '' });
    expect(noEndpoint.statusCode).toBe(404);
    expect(client.textOf('error')).toBe('Webhook endpoint was not found.');
  });
});

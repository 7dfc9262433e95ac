import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { graphql, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

describe('wallet balances and statements over REST and GraphQL', () => {
  let s: StartedTestApp;
  let beforeAny: Date;
  /** Lagos dates (UTC+1) from the first entry's day to today, both whole days. */
  const lagosDay = (at: Date) => new Date(at.getTime() + 3_600_000).toISOString().slice(0, 10);
  const range = () => `from=${lagosDay(beforeAny)}&to=${lagosDay(new Date())}`;
  const get = (url: string, key = s.tenant.keys.READ_ONLY) =>
    s.t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

  async function deposit(userId: string, kobo: bigint, description: string) {
    await s.t.services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'deposit',
        reference: randomUUID(),
        description,
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -kobo },
          { account: walletOf('sandbox', userId), amount: kobo },
        ],
      }),
    );
  }

  beforeAll(async () => {
    s = await startTestApp();
    beforeAny = new Date();
    // The deposits below must be stamped strictly after beforeAny (millisecond clock).
    await waitUntil(() => Date.now() > beforeAny.getTime() + 1, { timeoutMs: 1_000, intervalMs: 1 });
    await deposit(s.tenant.user.id, 150_050n, 'Deposit REF-1');
    await deposit(s.tenant.user.id, 7n, '=HYPERLINK("http://evil")');
    await s.t.services.db.transaction((tx) =>
      ledger.hold(tx, { environment: 'sandbox', userId: s.tenant.user.id }, 10_000n, 'PAYOUT-7'),
    );
  });
  afterAll(() => s.t.close());

  it('gives available, pending and posted balances now and as of an earlier instant', async () => {
    const now = await get('/api/v1/wallet/balances');
    expect(now.statusCode).toBe(200);
    expect(now.json().data).toEqual({
      currency: 'NGN',
      at: null,
      available: 1400.57,
      availableKobo: 140_057,
      pending: 100,
      pendingKobo: 10_000,
      posted: 1500.57,
      postedKobo: 150_057,
    });
    const earlier = await get(`/api/v1/wallet/balances?at=${beforeAny.toISOString()}`);
    expect(earlier.json().data).toMatchObject({ availableKobo: 0, pendingKobo: 0, postedKobo: 0 });
    expect((await get('/api/v1/wallet/balances?at=yesterday')).statusCode).toBe(400);
    expect((await s.t.app.inject({ method: 'GET', url: '/api/v1/wallet/balances' })).statusCode).toBe(401);
  });

  it('pages a statement with opening and closing balances, each entry with its posting and reference', async () => {
    const first = await get(`/api/v1/wallet/statement?${range()}&limit=2`);
    expect(first.statusCode).toBe(200);
    const page1 = first.json().data;
    expect(page1).toMatchObject({
      currency: 'NGN',
      openingBalanceKobo: 0,
      closingBalanceKobo: 140_057,
      totalCreditsKobo: 150_057,
      totalDebitsKobo: 10_000,
      entryCount: 3,
    });
    expect(
      page1.lines.map((l: { kind: string; amountKobo: number; balanceKobo: number }) => [
        l.kind,
        l.amountKobo,
        l.balanceKobo,
      ]),
    ).toEqual([
      ['deposit', 150_050, 150_050],
      ['deposit', 7, 150_057],
    ]);
    expect(page1.lines[0]).toMatchObject({
      description: 'Deposit REF-1',
      amount: 1500.5,
      postingId: expect.any(String),
    });
    expect(page1.nextCursor).toBe(page1.lines[1].id);

    const second = (await get(`/api/v1/wallet/statement?${range()}&limit=2&after=${page1.nextCursor}`)).json().data;
    expect(second.lines).toEqual([
      expect.objectContaining({
        kind: 'hold',
        amountKobo: -10_000,
        balanceKobo: 140_057,
        description: 'Hold for PAYOUT-7',
      }),
    ]);
    expect(second.nextCursor).toBeNull();
  });

  it('gives the same statement as CSV, with the next page in X-Next-Cursor and formulas defused', async () => {
    const page1 = await get(`/api/v1/wallet/statement.csv?${range()}&limit=2`);
    expect(page1.statusCode).toBe(200);
    expect(page1.headers['content-type']).toMatch(/^text\/csv/);
    expect(page1.headers['content-disposition']).toMatch(/attachment; filename="statement-/);
    const rows = page1.body.trimEnd().split('\r\n');
    expect(rows[0]).toBe('date,type,reference,description,amount,amount_kobo,balance,balance_kobo,posting_id,entry_id');
    expect(rows[1]).toMatch(/,opening_balance,,Opening balance,,,0\.00,0,,$/);
    expect(rows[2]).toMatch(/,deposit,[0-9a-f-]+,Deposit REF-1,1500\.50,150050,1500\.50,150050,/);
    expect(rows[3]).toContain(`,"'=HYPERLINK(""http://evil"")",0.07,7,1500.57,150057,`);
    expect(rows).toHaveLength(4);
    const cursor = page1.headers['x-next-cursor'];
    expect(cursor).toEqual(expect.any(String));

    const page2 = await get(`/api/v1/wallet/statement.csv?${range()}&limit=2&after=${cursor}`);
    const rows2 = page2.body.trimEnd().split('\r\n');
    expect(rows2[1]).toMatch(/,opening_balance,,Balance brought forward,,,1500\.57,150057,,$/);
    expect(rows2[2]).toMatch(/,hold,[0-9a-f-]+,Hold for PAYOUT-7,-100\.00,-10000,1400\.57,140057,/);
    expect(rows2[3]).toMatch(/,closing_balance,,Closing balance,,,1400\.57,140057,,$/);
    expect(page2.headers['x-next-cursor']).toBeUndefined();
  });

  it('answers bad ranges, page sizes and cursors with 400 naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['/api/v1/wallet/statement?from=2026-02-30&to=2026-03-01', 'from'],
      ['/api/v1/wallet/statement?from=2026-03-02&to=2026-03-01', 'to'],
      ['/api/v1/wallet/statement?from=2026-03-01&to=2026-03-02&limit=5000', 'limit'],
      ['/api/v1/wallet/statement?from=2026-03-01&to=2026-03-02&after=nope', 'after'],
      [`/api/v1/wallet/statement?from=2026-03-01&to=2026-03-02&after=${randomUUID()}`, 'after'],
    ];
    for (const [url, field] of cases) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json().message, url).toMatch(new RegExp(field));
    }
  });

  it("never shows another user's entries, not even through a cursor", async () => {
    const other = await s.t.services.users.createUser({ email: `o-${randomUUID()}@example.test` });
    await deposit(other.id, 999n, 'theirs');
    const theirs = await s.t.services.statements.statement(
      { kind: 'api_key', credentialId: 'x', userId: other.id, environment: 'sandbox', abilities: new Set(['READ']) },
      { from: beforeAny, to: new Date(Date.now() + 60_000), limit: 10 },
    );
    const response = await get(`/api/v1/wallet/statement?${range()}&after=${theirs.lines[0]!.id}`);
    expect(response.statusCode).toBe(400);
    const mine = (await get(`/api/v1/wallet/statement?${range()}`)).json().data;
    expect(mine.lines.map((l: { description: string }) => l.description)).not.toContain('theirs');
    // Production keys see the production wallet: empty.
    const production = await get(`/api/v1/wallet/statement?${range()}`, s.tenant.productionKey);
    expect(production.json().data).toMatchObject({ entryCount: 0, openingBalanceKobo: 0, lines: [] });
  });

  it('serves the same over GraphQL, CSV included', async () => {
    const { body } = await graphql(
      s.t.app,
      s.tenant.keys.READ_ONLY,
      `query($from: DateTime!, $to: DateTime!) {
        walletBalances { availableKobo pendingKobo postedKobo }
        walletStatement(from: $from, to: $to, first: 10) { openingBalanceKobo closingBalanceKobo entryCount nextCursor lines { kind amountKobo balanceKobo } csv }
      }`,
      { from: beforeAny.toISOString(), to: new Date(Date.now() + 60_000).toISOString() },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data!.walletBalances).toEqual({ availableKobo: 140_057, pendingKobo: 10_000, postedKobo: 150_057 });
    expect(body.data!.walletStatement).toMatchObject({
      openingBalanceKobo: 0,
      closingBalanceKobo: 140_057,
      entryCount: 3,
      nextCursor: null,
    });
    expect(body.data!.walletStatement.csv.trimEnd().split('\r\n')).toHaveLength(6);
  });
});

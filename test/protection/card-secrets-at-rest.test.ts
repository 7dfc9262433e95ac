import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { startTestApp, type StartedTestApp } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';

/** Every text a row holds (bytea left out: chain snapshots), one string per row, for every table. */
async function everyRowAsText(s: StartedTestApp): Promise<Array<{ table: string; text: string }>> {
  const db = s.t.services.db;
  const rowsOf = (result: unknown) => (result as { rows: Array<Record<string, unknown>> }).rows;
  const columns = rowsOf(
    await db.execute(sql`
      select c.table_schema, c.table_name, c.column_name
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where t.table_type = 'BASE TABLE'
        and c.table_schema not in ('pg_catalog', 'information_schema')
        -- Secrets arrive as strings: they could sit in character or JSON columns. Amounts and ids in
        -- numeric columns (another test's 12,345 kobo) are not the OTP 12345.
        and c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY')
      order by c.table_schema, c.table_name, c.ordinal_position`),
  );
  const tables = new Map<string, string[]>();
  for (const c of columns) {
    const table = `"${c.table_schema}"."${c.table_name}"`;
    tables.set(table, [...(tables.get(table) ?? []), `"${c.column_name}"`]);
  }
  const out: Array<{ table: string; text: string }> = [];
  for (const [table, names] of tables) {
    const rows = rowsOf(
      await db.execute(
        sql.raw(`select concat_ws(' | ', ${names.map((n) => `${n}::text`).join(', ')}) as t from ${table}`),
      ),
    );
    for (const row of rows) out.push({ table, text: String(row.t) });
  }
  return out;
}

describe('card numbers, CVVs, PINs and OTPs are nowhere at rest', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  it('after keyed card deposits and their PIN and OTP steps, no table holds any of the values sent', async () => {
    const card = SANDBOX_PAYMENTS.cards.pinThenOtp;
    const cvv = '7294';
    const wrongPin = '8604';
    const wrongOtp = '90817';
    const call = rest(s.t, s.tenant.keys.FULL_ACCESS);
    const method = await call('POST', '/api/v1/payment-methods', {
      type: 'card',
      card: { number: card, expMonth: 9, expYear: new Date().getUTCFullYear() + 3, cvv },
    });
    expect(method.statusCode, method.body).toBe(201);
    const deposit = async (key: string) => {
      const response = await call(
        'POST',
        '/api/v1/wallet/deposit/payment-method',
        { amount: 1200, paymentMethodId: method.json().data.id },
        { 'idempotency-key': key },
      );
      expect(response.statusCode, response.body).toBe(201);
      return `/api/v1/wallet/deposits/${response.json().data.reference}/authorize`;
    };
    const authorize = async (url: string, body: object, key: string) => {
      const response = await call('POST', url, body, { 'idempotency-key': key });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data;
    };
    // A wrong PIN fails one deposit; the right PIN then a wrong OTP fails another; the third completes.
    const first = await deposit('dep-1');
    expect((await authorize(first, { type: 'pin', pin: wrongPin }, 'pin-1')).status).toBe('FAILED');
    const second = await deposit('dep-2');
    await authorize(second, { type: 'pin', pin: SANDBOX_PAYMENTS.pin }, 'pin-2');
    expect((await authorize(second, { type: 'otp', otp: wrongOtp }, 'otp-2')).status).toBe('FAILED');
    const third = await deposit('dep-3');
    await authorize(third, { type: 'pin', pin: SANDBOX_PAYMENTS.pin }, 'pin-3');
    expect((await authorize(third, { type: 'otp', otp: SANDBOX_PAYMENTS.otp }, 'otp-3')).status).toBe('COMPLETED');
    // Replays answer from what is stored: the same, still without the values.
    expect((await authorize(third, { type: 'otp', otp: SANDBOX_PAYMENTS.otp }, 'otp-3')).status).toBe('COMPLETED');

    const rows = await everyRowAsText(s);
    expect(rows.some((r) => r.table.includes('idempotency_keys'))).toBe(true);
    // A four-digit CVV or PIN is one of a UUID's groups about once in 2,000 ids (ad5e520e-7294-…), and
    // the database holds thousands of them; a value inside an id is no leak, so ids are blanked first.
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
    const texts = rows.map((r) => ({ table: r.table, text: r.text.replace(uuid, '<uuid>') }));
    const found = (value: string) => {
      const pattern = new RegExp(`(?<![0-9A-Za-z])${value}(?![0-9A-Za-z])`);
      return texts.filter((r) => pattern.test(r.text)).map((r) => `${r.table}: ${r.text.slice(0, 200)}`);
    };
    const sent = [card, card.slice(0, 6) + card.slice(-4), cvv, wrongPin, SANDBOX_PAYMENTS.pin, wrongOtp];
    for (const value of [...sent, SANDBOX_PAYMENTS.otp]) expect(found(value), value).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledger } from '../../src/domain/ledger/ledger.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { rest } from '../helpers/rest.js';
import { balanceOf, fund } from '../helpers/wallet.js';

describe('wallet balance, transfers and transactions', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  it('funds a wallet, shows the balance and the ledger, and lists the deposit as a transaction', async () => {
    const alice = await seedTenant(s.t.services);
    await fund(s.t, alice, 1500.5);
    expect(await balanceOf(s.t, alice)).toMatchObject({ available: 1500.5, availableKobo: 150050, held: 0 });
    const entries = (await rest(s.t, alice.keys.READ_ONLY)('GET', '/api/v1/wallet/ledger')).json().data;
    expect(entries).toEqual([
      expect.objectContaining({ amount: 1500.5, amountKobo: 150050, balanceAfter: 1500.5, kind: 'deposit' }),
    ]);
    const listed = (await rest(s.t, alice.keys.READ_ONLY)('GET', '/api/v1/transactions')).json();
    expect(listed).toMatchObject({ statusCode: 200, message: 'Transactions retrieved successfully', errors: {} });
    expect(listed.data.transactions).toEqual([
      expect.objectContaining({ type: 'DEPOSIT', status: 'COMPLETED', amount: 1500.5, currency: 'NGN' }),
    ]);
  });

  it("lets two senders use one reference with one recipient: the second's incoming side carries its sender's suffix", async () => {
    const alice = await seedTenant(s.t.services);
    const carol = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    await fund(s.t, alice, 100);
    await fund(s.t, carol, 100);
    const body = { amount: 10, recipient: bob.user.id, reference: 'INV-7' };
    const first = await rest(s.t, alice.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', body);
    const second = await rest(s.t, carol.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', body);
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(second.json().data).toMatchObject({ reference: 'INV-7', type: 'TRANSFER_OUT' });
    const read = rest(s.t, bob.keys.READ_ONLY);
    expect((await read('GET', '/api/v1/transactions/reference/INV-7:in')).json().data).toMatchObject({
      type: 'TRANSFER_IN',
      amount: 10,
    });
    const suffixed = `INV-7:in:${carol.user.id}`;
    expect((await read('GET', `/api/v1/transactions/reference/${suffixed}`)).json().data).toMatchObject({
      type: 'TRANSFER_IN',
      amount: 10,
    });
    const events = await eventsOf(s.t, bob, 'transaction.', 2);
    expect(events.map((e) => e.data['reference'])).toEqual(['INV-7:in', suffixed]);
    expect(await balanceOf(s.t, bob)).toMatchObject({ availableKobo: 2000 });
    // The sender's own reference is still refused by name when the sender reuses it.
    const again = await rest(s.t, carol.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', body);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toContain(second.json().data.id);
    expect(await balanceOf(s.t, carol)).toMatchObject({ availableKobo: 9000 });
  });

  it("replays the suffixed transfer under its key, and finds a 64-character reference's suffixed side by REST", async () => {
    const alice = await seedTenant(s.t.services);
    const carol = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    await fund(s.t, alice, 100);
    await fund(s.t, carol, 100);
    const reference = `L${'x'.repeat(63)}`;
    const body = { amount: 10, recipient: bob.user.id, reference };
    expect((await rest(s.t, alice.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', body)).statusCode).toBe(201);
    const key = { 'idempotency-key': `suffix-${carol.user.id}` };
    const sent = await rest(s.t, carol.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', body, key);
    expect(sent.statusCode, sent.body).toBe(201);
    const replayed = await rest(s.t, carol.keys.TRANSACTIONS)('POST', '/api/v1/wallet/transfer', body, key);
    expect(replayed.statusCode).toBe(201);
    expect(replayed.json().data).toEqual(sent.json().data);
    const suffixed = `${reference}:in:${carol.user.id}`;
    expect(suffixed).toHaveLength(104);
    const found = await rest(s.t, bob.keys.READ_ONLY)('GET', `/api/v1/transactions/reference/${suffixed}`);
    expect(found.statusCode).toBe(200);
    expect(found.json().data).toMatchObject({ type: 'TRANSFER_IN', amount: 10, reference: suffixed });
    expect(await balanceOf(s.t, carol)).toMatchObject({ availableKobo: 9000 });
  });

  it('transfers atomically to another user by email or id, with both transactions and events', async () => {
    const alice = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    await fund(s.t, alice, 1000);
    const send = rest(s.t, alice.keys.TRANSACTIONS);
    const byEmail = await send('POST', '/api/v1/wallet/transfer', {
      amount: 250.25,
      recipient: bob.user.email,
      narration: 'lunch',
      reference: 'TRF-lunch',
    });
    expect(byEmail.statusCode).toBe(201);
    expect(byEmail.json()).toMatchObject({
      statusCode: 201,
      message: 'Transfer completed successfully',
      data: { type: 'TRANSFER_OUT', status: 'COMPLETED', amount: 250.25, reference: 'TRF-lunch', description: 'lunch' },
    });
    const byId = await send('POST', '/api/v1/wallet/transfer', { amount: 100, recipient: bob.user.id });
    expect(byId.statusCode).toBe(201);
    expect(await balanceOf(s.t, alice)).toMatchObject({ availableKobo: 64975 });
    expect(await balanceOf(s.t, bob)).toMatchObject({ availableKobo: 35025 });
    const incoming = (await rest(s.t, bob.keys.READ_ONLY)('GET', '/api/v1/transactions/reference/TRF-lunch:in')).json()
      .data;
    expect(incoming).toMatchObject({ type: 'TRANSFER_IN', status: 'COMPLETED', amount: 250.25 });
    const events = await eventsOf(s.t, bob, 'transaction.', 2);
    expect(events.map((e) => [e.type, e.data['type'], e.data['amount']])).toEqual([
      ['transaction.completed', 'TRANSFER_IN', 250.25],
      ['transaction.completed', 'TRANSFER_IN', 100],
    ]);
    expect(await ledger.totalOf(s.t.services.db, 'sandbox')).toBe(0n);
  });

  it('moves nothing for a missing recipient, oneself, too little balance or a reused reference', async () => {
    const alice = await seedTenant(s.t.services);
    await fund(s.t, alice, 100);
    const send = rest(s.t, alice.keys.TRANSACTIONS);
    const missing = await send('POST', '/api/v1/wallet/transfer', { amount: 10, recipient: 'nobody@example.test' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toContain('recipient');
    const missingId = await send('POST', '/api/v1/wallet/transfer', {
      amount: 10,
      recipient: '00000000-0000-4000-8000-000000000000',
    });
    expect(missingId.statusCode).toBe(404);
    const self = await send('POST', '/api/v1/wallet/transfer', { amount: 10, recipient: alice.user.email });
    expect(self.statusCode).toBe(400);
    const bob = await seedTenant(s.t.services);
    const tooMuch = await send('POST', '/api/v1/wallet/transfer', { amount: 100.01, recipient: bob.user.id });
    expect(tooMuch.statusCode).toBe(400);
    expect(tooMuch.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', errorCode: 'INSUFFICIENT_FUNDS' });
    const first = await send('POST', '/api/v1/wallet/transfer', {
      amount: 1,
      recipient: bob.user.id,
      reference: 'TRF-once',
    });
    const reused = await send('POST', '/api/v1/wallet/transfer', {
      amount: 1,
      recipient: bob.user.id,
      reference: 'TRF-once',
    });
    expect(reused.statusCode).toBe(409);
    expect(reused.json().message).toContain('TRF-once');
    // It names the transaction holding the reference.
    expect(reused.json().message).toContain(first.json().data.id);
    expect(await balanceOf(s.t, alice)).toMatchObject({ availableKobo: 9900 });
    expect(await balanceOf(s.t, bob)).toMatchObject({ availableKobo: 100 });
  });

  it('refuses bad amounts with 400 naming the field', async () => {
    const alice = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    const send = rest(s.t, alice.keys.TRANSACTIONS);
    for (const amount of [-5, 0, 1.234, '100', null, 10_000_000.01, 1e21, true]) {
      const response = await send('POST', '/api/v1/wallet/transfer', { amount, recipient: bob.user.id });
      expect(response.statusCode, String(amount)).toBe(400);
      expect(response.json().message, String(amount)).toContain('amount');
    }
    // NaN cannot be written in JSON; over GraphQL a non-number is refused by the Float type.
    const nan = await graphql(
      s.t.app,
      alice.keys.TRANSACTIONS,
      'mutation ($amount: Float!, $to: String!) { transfer(input: { amount: $amount, recipient: $to }) { id } }',
      { amount: 'NaN', to: bob.user.id },
    );
    expect(nan.body.errors![0]!.extensions['code']).toBe('BAD_USER_INPUT');
    const missingRecipient = await send('POST', '/api/v1/wallet/transfer', { amount: 5 });
    expect(missingRecipient.json().message).toContain('recipient');
  });

  it('replays a retried Idempotency-Key, answers 422 for the key with another body, and replays an error too', async () => {
    const alice = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    await fund(s.t, alice, 50);
    const send = rest(s.t, alice.keys.TRANSACTIONS);
    const key = { 'idempotency-key': `k-${alice.user.id}` };
    const first = await send('POST', '/api/v1/wallet/transfer', { amount: 20, recipient: bob.user.id }, key);
    const again = await send('POST', '/api/v1/wallet/transfer', { amount: 20, recipient: bob.user.id }, key);
    expect(again.statusCode).toBe(201);
    expect(again.json().data).toEqual(first.json().data);
    const changed = await send('POST', '/api/v1/wallet/transfer', { amount: 21, recipient: bob.user.id }, key);
    expect(changed.statusCode).toBe(422);
    expect(changed.json().errorCode).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await balanceOf(s.t, alice)).toMatchObject({ availableKobo: 3000 });
    const poorKey = { 'idempotency-key': `poor-${alice.user.id}` };
    const refused = await send('POST', '/api/v1/wallet/transfer', { amount: 40, recipient: bob.user.id }, poorKey);
    expect(refused.statusCode).toBe(400);
    await fund(s.t, alice, 100);
    // The key's answer was the refusal; it stays the answer even though the money is there now.
    const replayed = await send('POST', '/api/v1/wallet/transfer', { amount: 40, recipient: bob.user.id }, poorKey);
    expect(replayed.statusCode).toBe(400);
    expect(replayed.json().errorCode).toBe('INSUFFICIENT_FUNDS');
  });

  it("pages and filters transactions, and answers another user's id or reference with 404", async () => {
    const alice = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    await fund(s.t, alice, 1000);
    const send = rest(s.t, alice.keys.TRANSACTIONS);
    for (const amount of [10, 20, 30])
      await send('POST', '/api/v1/wallet/transfer', {
        amount,
        recipient: bob.user.id,
        reference: `TRF-page-${amount}`,
      });
    const list = async (query: string) =>
      (await rest(s.t, alice.keys.READ_ONLY)('GET', `/api/v1/transactions${query}`)).json().data;
    expect((await list('')).total).toBe(4);
    expect((await list('?type=TRANSFER_OUT')).total).toBe(3);
    expect((await list('?type=DEPOSIT&status=COMPLETED')).total).toBe(1);
    expect((await list('?minAmount=15&maxAmount=30')).transactions.map((t: { amount: number }) => t.amount)).toEqual([
      30, 20,
    ]);
    expect((await list('?search=page-2')).transactions.map((t: { reference: string }) => t.reference)).toEqual([
      'TRF-page-20',
    ]);
    const page2 = await list('?limit=3&page=2');
    expect(page2).toMatchObject({ page: 2, limit: 3, total: 4, totalPages: 2, hasNext: false, hasPrev: true });
    expect(page2.transactions).toHaveLength(1);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await list(`?from=${encodeURIComponent(future)}`)).total).toBe(0);
    // A calendar date is accepted too (a day in Africa/Lagos; as `to` it includes the whole day).
    const lagosToday = new Date(Date.now() + 3600_000).toISOString().slice(0, 10);
    expect((await list(`?from=${lagosToday}&to=${lagosToday}`)).total).toBe(4);
    expect((await list('?from=2000-01-01&to=2000-01-02')).total).toBe(0);
    const graph = await graphql(
      s.t.app,
      alice.keys.READ_ONLY,
      `{ walletTransactions(filter: { from: "${lagosToday}", to: "${future}" }) { total } }`,
    );
    expect(graph.body.data?.walletTransactions.total).toBe(4);
    const impossible = await rest(s.t, alice.keys.READ_ONLY)('GET', '/api/v1/transactions?from=2026-02-30');
    expect(impossible.statusCode).toBe(400);
    expect(impossible.json().message).toMatch(/^from is not a real date/);
    for (const bad of [
      '?limit=0',
      '?limit=101',
      '?type=REFUND',
      '?status=DONE',
      '?minAmount=-1',
      '?from=yesterday',
      '?from=2026-02-30',
      `?from=${lagosToday}&to=2000-01-01`,
      '?minAmount=50&maxAmount=10',
    ]) {
      expect((await rest(s.t, alice.keys.READ_ONLY)('GET', `/api/v1/transactions${bad}`)).statusCode, bad).toBe(400);
    }
    const mine = (await list('?type=TRANSFER_OUT')).transactions[0];
    expect(
      (await rest(s.t, alice.keys.READ_ONLY)('GET', `/api/v1/transactions/${mine.id}`)).json().data.reference,
    ).toBe(mine.reference);
    const otherId = await rest(s.t, bob.keys.READ_ONLY)('GET', `/api/v1/transactions/${mine.id}`);
    const otherReference = await rest(s.t, bob.keys.READ_ONLY)(
      'GET',
      `/api/v1/transactions/reference/${mine.reference}`,
    );
    const nonsense = await rest(s.t, bob.keys.READ_ONLY)('GET', '/api/v1/transactions/not-a-uuid');
    expect([otherId.statusCode, otherReference.statusCode, nonsense.statusCode]).toEqual([404, 404, 404]);
    expect(
      (await rest(s.t, alice.keys.READ_ONLY)('POST', '/api/v1/wallet/transfer', { amount: 1, recipient: bob.user.id }))
        .statusCode,
    ).toBe(403);
  });

  it('serves the wallet over GraphQL', async () => {
    const alice = await seedTenant(s.t.services);
    const bob = await seedTenant(s.t.services);
    await fund(s.t, alice, 75);
    const sent = await graphql(
      s.t.app,
      alice.keys.TRANSACTIONS,
      `mutation { transfer(input: { amount: 25, recipient: "${bob.user.email}", reference: "G-1" }) { id type status amount amountKobo fee reference counterparty version } }`,
    );
    expect(sent.body.data!.transfer).toMatchObject({
      type: 'TRANSFER_OUT',
      status: 'COMPLETED',
      amount: 25,
      amountKobo: 2500,
      fee: 0,
      reference: 'G-1',
      version: 1,
    });
    const read = await graphql(
      s.t.app,
      alice.keys.READ_ONLY,
      `{ walletBalance { available availableKobo held total totalKobo currency }
         walletLedger(first: 5) { amount kind balanceAfter }
         walletTransactions(filter: { type: TRANSFER_OUT }) { total transactions { reference } }
         walletTransactionByReference(reference: "G-1") { amount }
         walletTransaction(id: "${sent.body.data!.transfer.id}") { reference } }`,
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data).toMatchObject({
      walletBalance: { available: 50, availableKobo: 5000, held: 0, total: 50, totalKobo: 5000, currency: 'NGN' },
      walletLedger: [
        { amount: -25, kind: 'transfer', balanceAfter: 50 },
        { amount: 75, kind: 'deposit', balanceAfter: 75 },
      ],
      walletTransactions: { total: 1, transactions: [{ reference: 'G-1' }] },
      walletTransactionByReference: { amount: 25 },
      walletTransaction: { reference: 'G-1' },
    });
  });
});

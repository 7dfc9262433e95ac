import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { facadeKeys } from '../../src/db/facade-keys-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { FACADE_OPTIONS, runFacadeCommand } from '../../scripts/admin/facade-commands.js';
import { runTs } from '../helpers/child.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { SOLANA_ADDRESS, SpecUpstream, type SpecUser } from '../fakes/spec-upstream.js';
import { waitUntil } from '../helpers/wait.js';

const AIRTIME = '/api/v1/bills/buy-airtime';
const OPERATOR = 'operator-token-0123456789';

interface Answer {
  data?: { buyAirtime?: { reference: string; status: string; amount: number; customer: string } } | null;
  errors?: Array<{ message: string; extensions: { code: string; field?: string } }>;
}

/** The admin commands docs/facade.md shows, as written (each on its own line of a code block). */
const DOCUMENTED = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'facade.md'), 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('npm run admin -- facade-'));

/** The words of a command as a POSIX shell splits them (single and double quotes). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The gauge's value in the metrics text. */
function gauge(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

describe('idempotency a facade owns for its mutations, against an upstream written from the spec', () => {
  const clock = new ManualClock(new Date());
  let upstream: SpecUpstream;
  let facade: TestApp;
  let jobs: JobRunner;

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    facade = await createTestApp({
      clock,
      config: {
        GATEWAY_MODE: 'facade',
        UPSTREAM_URL: upstream.url,
        UPSTREAM_TIMEOUT_MS: 2_000,
        API_KEY_CACHE_MS: 0,
        // The spec's upstream says nothing of Idempotency-Key: no route honours it.
        UPSTREAM_KEYED_ROUTES: 'none',
        UPSTREAM_MATCH_EVERY_MS: 1_000,
        UPSTREAM_MATCH_WINDOW_MS: 60_000,
        OPERATOR_TOKEN: OPERATOR,
      },
    });
    jobs = new JobRunner(facade.services.db, clock, [facade.services.keyMatcher!]);
  });

  afterAll(async () => {
    await facade.close();
    await upstream.stop();
  });

  const payments = () => upstream.requests.filter((r) => r.path === AIRTIME);

  const buyAirtime = async (key: string, user: { key: string }, amount = 100, phone = '08031234567') => {
    const response = await facade.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', 'x-api-key': user.key, 'idempotency-key': key },
      payload: JSON.stringify({
        query: `mutation { buyAirtime(input: { phoneNumber: "${phone}", biller: "MTN", amount: ${amount} }) { reference status amount customer } }`,
      }),
    });
    return response.json() as Answer;
  };

  /** A payment that times out upstream: the facade's record of it is left `unknown`. */
  const timedOut = async (user: { key: string }, key: string, phone: string) => {
    upstream.misbehaviour = 'timeout';
    upstream.misbehavingPath = AIRTIME;
    try {
      const answer = await buyAirtime(key, user, 250, phone);
      expect(answer.errors?.[0]?.extensions.code).toBe('UPSTREAM_TIMEOUT');
    } finally {
      upstream.misbehaviour = undefined;
      upstream.misbehavingPath = undefined;
    }
  };

  /** Runs the matcher's due jobs after `ms`. */
  const matchAfter = async (ms: number) => {
    clock.advance(ms);
    await jobs.runDueJobs();
  };

  it('replays the stored answer for the same key and input, and refuses the key with another input (422)', async () => {
    const user = upstream.addUser();
    const key = randomUUID();
    const first = await buyAirtime(key, user);
    expect(first.errors).toBeUndefined();
    const sent = payments().length;
    const again = await buyAirtime(key, user);
    expect(again).toEqual(first);
    expect(payments().length).toBe(sent);
    const other = await buyAirtime(key, user, 150);
    expect(other.errors?.[0]?.extensions).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', field: 'Idempotency-Key' });
    expect(payments().length).toBe(sent);
  });

  it('never re-sends a payment that timed out; the matcher settles it once the upstream shows it, and a retry gets that answer', async () => {
    const { key: apiKey, user } = upstream.addUser();
    const key = randomUUID();
    const phone = '08030000001';
    await timedOut({ key: apiKey }, key, phone);
    expect(payments().filter((p) => p.headers['x-api-key'] === apiKey)).toHaveLength(1);

    // A retry while the outcome is unknown is 409, and nothing is sent.
    const early = await buyAirtime(key, { key: apiKey }, 250, phone);
    expect(early.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', field: 'Idempotency-Key' });
    expect(payments().filter((p) => p.headers['x-api-key'] === apiKey)).toHaveLength(1);

    // The matcher looks; the upstream shows nothing yet.
    await matchAfter(1_000);
    expect((await buyAirtime(key, { key: apiKey }, 250, phone)).errors?.[0]?.extensions.code).toBe('CONFLICT');

    // The upstream shows the record (it had taken the payment), beside an older one that does not match.
    upstream.addBill(user, { customer: phone, amount: 250, createdAt: new Date(Date.now() - 3_600_000).toISOString() });
    const record = upstream.addBill(user, { customer: phone, amount: 250, type: 'AIRTIME' });
    await matchAfter(1_000);

    const retried = await buyAirtime(key, { key: apiKey }, 250, phone);
    expect(retried.errors).toBeUndefined();
    expect(retried.data!.buyAirtime).toEqual({
      reference: record.reference,
      status: 'SUCCESS',
      amount: 250,
      customer: phone,
    });
    expect(payments().filter((p) => p.headers['x-api-key'] === apiKey)).toHaveLength(1);
  });

  it("does not settle by fields while another send alike is unsettled: the one record found may be the other send's", async () => {
    const { key: apiKey, user } = upstream.addUser();
    const [first, second] = [randomUUID(), randomUUID()];
    const phone = '08030000009';
    await timedOut({ key: apiKey }, first, phone);
    await timedOut({ key: apiKey }, second, phone);
    // Upstream, only one of the two was taken: its record fits both sends.
    upstream.addBill(user, { customer: phone, amount: 250, type: 'AIRTIME' });
    await matchAfter(1_000);
    const states = await facade.services.db.select().from(facadeKeys);
    for (const key of [first, second]) {
      const row = states.find((r) => r.key === key)!;
      expect(row.state, key).toBe('unknown');
      expect(row.matchedReference, key).toBeNull();
    }
    for (const key of [first, second])
      expect((await buyAirtime(key, { key: apiKey }, 250, phone)).errors?.[0]?.extensions.code).toBe('CONFLICT');
    // An operator's choice settles both; the queue the next case measures starts empty.
    for (const key of [first, second]) {
      const row = states.find((r) => r.key === key)!;
      const settled = await facade.services.facadeKeys!.settle(row.id, {
        state: 'failed',
        answer: { error: { code: 'CONFLICT', message: 'settled by the test' } },
        by: 'operator',
      });
      expect(settled).toBe(true);
    }
  });

  it('puts one the upstream never shows in the operator queue, its age metric rising, until the CLI settles it', async () => {
    const { key: apiKey, user } = upstream.addUser();
    const key = randomUUID();
    const phone = '08030000002';
    await timedOut({ key: apiKey }, key, phone);
    const [entry] = (await facade.services.unknownOutcomes!.list({ all: true })).filter((u) => u.key === key);
    expect(entry).toMatchObject({ operation: 'bills.buyAirtime', queuedAt: null });

    await matchAfter(1_000);
    await matchAfter(60_000);
    const queued = (await runFacadeCommand(facade.services, 'facade-unknowns', ['facade-unknowns'], {}))!;
    expect((queued.json as Array<{ id: string }>).map((u) => u.id)).toContain(entry!.id);
    expect(queued.text).toContain(entry!.id);

    const age = gauge(await facade.app.metricsText(true), 'gateway_facade_unknown_outcomes_oldest_seconds');
    expect(age).toBeGreaterThanOrEqual(61);
    clock.advance(30_000);
    expect(
      gauge(await facade.app.metricsText(true), 'gateway_facade_unknown_outcomes_oldest_seconds'),
    ).toBeGreaterThanOrEqual(age + 30);

    // The operator page lists it, for the operator token only; the service's reconciliation page is not a facade's.
    const page = await facade.app.inject({
      url: '/operator/facade-unknowns',
      headers: { authorization: `Bearer ${OPERATOR}` },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(entry!.id);
    expect(page.body).toMatch(/Operator queue \(\d+\)/);
    expect((await facade.app.inject({ url: '/operator/facade-unknowns' })).statusCode).toBe(401);
    expect(
      (
        await facade.app.inject({
          url: '/operator/facade-unknowns',
          headers: { authorization: `Bearer ${upstream.addUser().key}` },
        })
      ).statusCode,
    ).toBe(401);
    expect(
      (await facade.app.inject({ url: '/operator/reconciliation', headers: { authorization: `Bearer ${OPERATOR}` } }))
        .statusCode,
    ).toBe(404);

    // Still nothing sent again, and a retry is told to wait.
    expect((await buyAirtime(key, { key: apiKey }, 250, phone)).errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect(payments().filter((p) => p.headers['x-api-key'] === apiKey)).toHaveLength(1);

    // A reference of another payment (mistyped, or the upstream's support read the wrong one) is
    // refused, naming the field that differs; nothing is settled.
    const others = [
      ['type', { type: 'MOBILEDATA' as const, customer: phone, amount: 250 }, 'MOBILEDATA', 'AIRTIME'],
      ['customer', { customer: '08039999999', amount: 250 }, '08039999999', phone],
      ['amount', { customer: phone, amount: 300 }, '30000 kobo', '25000 kobo'],
    ] as const;
    for (const [field, fields, theirs, ours] of others) {
      const other = upstream.addBill(user, { ...fields, status: 'PENDING' });
      await expect(
        runFacadeCommand(facade.services, 'facade-resolve', ['facade-resolve', entry!.id], {
          reference: other.reference,
          note: 'a wrong reference',
        }),
        field,
      ).rejects.toThrow(`its ${field} is ${theirs}, the send's ${ours}`);
    }
    expect((await facade.services.unknownOutcomes!.list()).map((u) => u.id)).toContain(entry!.id);

    // The operator finds the payment upstream (its support tells the reference) and settles it.
    const record = upstream.addBill(user, { customer: phone, amount: 250, status: 'PENDING' });
    const settled = await runFacadeCommand(facade.services, 'facade-resolve', ['facade-resolve', entry!.id], {
      reference: record.reference,
      note: 'found in the upstream dashboard',
    });
    expect(settled!.json).toEqual({ id: entry!.id, state: 'succeeded' });
    const retried = await buyAirtime(key, { key: apiKey }, 250, phone);
    expect(retried.data!.buyAirtime).toMatchObject({ reference: record.reference, status: 'PENDING' });
    expect(gauge(await facade.app.metricsText(true), 'gateway_facade_unknown_outcomes_queued')).toBe(0);
  });

  it('runs each command docs/facade.md shows, as written, on the records they name', async () => {
    const found = upstream.addUser();
    const notTaken = upstream.addUser();
    const foundKey = randomUUID();
    const notTakenKey = randomUUID();
    await timedOut({ key: found.key }, foundKey, '08030000004');
    await timedOut({ key: notTaken.key }, notTakenKey, '08030000005');
    await matchAfter(1_000);
    await matchAfter(60_000);
    const ids = new Map((await facade.services.unknownOutcomes!.list()).map((u) => [u.key, u.id]));
    const record = upstream.addBill(found.user, { customer: '08030000004', amount: 250 });
    const outcomes: unknown[] = [];
    for (const command of DOCUMENTED) {
      const target = command.includes('--failed') ? ids.get(notTakenKey)! : ids.get(foundKey)!;
      const args = words(command.replace('<id>', target).replace('<reference>', record.reference)).slice(4);
      const { positionals, values } = parseArgs({
        args,
        allowPositionals: true,
        options: { ...FACADE_OPTIONS, note: { type: 'string' }, limit: { type: 'string' } },
      });
      const output = await runFacadeCommand(facade.services, positionals[0], positionals, values);
      expect(output, command).toBeDefined();
      outcomes.push(output!.json);
    }
    expect(outcomes).toContainEqual({ id: ids.get(foundKey), state: 'succeeded' });
    expect(outcomes).toContainEqual({ id: ids.get(notTakenKey), state: 'failed' });
    const replayed = await buyAirtime(foundKey, found, 250, '08030000004');
    expect(replayed.data!.buyAirtime!.reference).toBe(record.reference);
  });

  it('answers 409 to a retry while the first request is still in flight, and sends it once', async () => {
    const user = upstream.addUser();
    const key = randomUUID();
    upstream.misbehaviour = 'slow';
    upstream.misbehavingPath = AIRTIME;
    try {
      const first = buyAirtime(key, user, 120, '08030000006');
      await waitUntil(() => upstream.waiting === 1);
      const second = await buyAirtime(key, user, 120, '08030000006');
      expect(second.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', field: 'Idempotency-Key' });
      upstream.release();
      const answered = await first;
      expect(answered.errors).toBeUndefined();
      expect(await buyAirtime(key, user, 120, '08030000006')).toEqual(answered);
      expect(payments().filter((p) => p.headers['x-api-key'] === user.key)).toHaveLength(1);
    } finally {
      upstream.misbehaviour = undefined;
      upstream.misbehavingPath = undefined;
      upstream.release();
    }
  });

  it('keeps a token transfer that timed out unsent; with no upstream record to look in, it waits out the window in the queue', async () => {
    const user = upstream.addUser();
    const key = randomUUID();
    const transfer = () =>
      facade.app
        .inject({
          method: 'POST',
          url: '/graphql',
          headers: { 'content-type': 'application/json', 'x-api-key': user.key, 'idempotency-key': key },
          payload: JSON.stringify({
            query: `mutation { transferSolanaToken(input: { to: "${SOLANA_ADDRESS}", tokenMintAddress: "${SOLANA_ADDRESS}", amount: "1.5" }) { signature } }`,
          }),
        })
        .then((r) => r.json() as { errors?: Array<{ extensions: { code: string } }> });
    const TRANSFER = '/api/v1/solana/transfer-token';
    upstream.misbehaviour = 'timeout';
    upstream.misbehavingPath = TRANSFER;
    try {
      expect((await transfer()).errors?.[0]?.extensions.code).toBe('UPSTREAM_TIMEOUT');
    } finally {
      upstream.misbehaviour = undefined;
      upstream.misbehavingPath = undefined;
    }
    expect((await transfer()).errors?.[0]?.extensions.code).toBe('CONFLICT');
    await matchAfter(1_000);
    await matchAfter(60_000);
    const [entry] = (await facade.services.unknownOutcomes!.list()).filter((u) => u.key === key);
    expect(entry).toMatchObject({
      operation: 'solana.transferToken',
      lastLook: expect.stringMatching(/no upstream records/),
    });
    expect(upstream.requests.filter((r) => r.path === TRANSFER && r.headers['x-api-key'] === user.key)).toHaveLength(1);
  });

  it('settles one as not taken upstream: a retry is told to use a new key', async () => {
    const { key: apiKey } = upstream.addUser();
    const key = randomUUID();
    await timedOut({ key: apiKey }, key, '08030000003');
    await matchAfter(1_000);
    await matchAfter(60_000);
    const [entry] = (await facade.services.unknownOutcomes!.list()).filter((u) => u.key === key);
    await runFacadeCommand(facade.services, 'facade-resolve', ['facade-resolve', entry!.id], {
      failed: true,
      note: 'the upstream has no such payment',
    });
    const retried = await buyAirtime(key, { key: apiKey }, 250, '08030000003');
    expect(retried.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect(retried.errors?.[0]?.message).toMatch(/new key/);
    await expect(
      runFacadeCommand(facade.services, 'facade-resolve', ['facade-resolve', entry!.id], { failed: true, note: 'x' }),
    ).rejects.toThrow(/settled already/);
  });
});

describe('the operator queue commands docs/facade.md shows', () => {
  it('are accepted by the admin CLI as written', async () => {
    expect(DOCUMENTED.length).toBeGreaterThanOrEqual(4);
    for (const command of DOCUMENTED) {
      // --help: the CLI parses every option first (an unknown one exits 2), then prints its usage.
      const run = await runTs('scripts/admin.ts', [...words(command).slice(4), '--help'], {});
      expect(run.code, command).toBe(0);
      expect(run.output).toContain(words(command)[4]);
    }
  });
});

describe('a facade whose upstream honours Idempotency-Key', () => {
  let upstream: SpecUpstream;
  let facade: TestApp;
  // Walked past the upstream's Retry-After, which the facade honours for the partner.
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    facade = await createTestApp({
      config: {
        GATEWAY_MODE: 'facade',
        UPSTREAM_URL: upstream.url,
        UPSTREAM_TIMEOUT_MS: 2_000,
        API_KEY_CACHE_MS: 0,
        UPSTREAM_KEYED_ROUTES: 'bills.buyAirtime',
      },
      clock,
    });
  });

  afterAll(async () => {
    await facade.close();
    await upstream.stop();
  });

  /** An airtime payment through the facade with the caller's key and an Idempotency-Key. */
  const airtime = (apiKey: string, key: string, phoneNumber: string, amount: number) =>
    facade.app
      .inject({
        method: 'POST',
        url: '/graphql',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'idempotency-key': key },
        payload: JSON.stringify({
          query: `mutation { buyAirtime(input: { phoneNumber: "${phoneNumber}", biller: "MTN", amount: ${amount} }) { reference } }`,
        }),
      })
      .then((r) => r.json() as Answer);

  it("forwards the caller's retry of a timed-out payment with the same key, once, and keeps the answer", async () => {
    const { key: apiKey }: { key: string; user: SpecUser } = upstream.addUser();
    const key = randomUUID();
    const send = () => airtime(apiKey, key, '08031112222', 300);
    upstream.misbehaviour = 'timeout';
    upstream.misbehavingPath = AIRTIME;
    expect((await send()).errors?.[0]?.extensions.code).toBe('UPSTREAM_TIMEOUT');
    upstream.misbehaviour = undefined;
    const retried = await send();
    expect(retried.errors).toBeUndefined();
    const sent = upstream.requests.filter((r) => r.path === AIRTIME && r.headers['x-api-key'] === apiKey);
    expect(sent.map((r) => r.headers['idempotency-key'])).toEqual([key, key]);
    expect(await send()).toEqual(retried);
    expect(upstream.requests.filter((r) => r.path === AIRTIME && r.headers['x-api-key'] === apiKey)).toHaveLength(2);
  });

  it('keeps the first send unknown when a retry is refused for now (429, 401): never forgotten, and a later retry gets the answer', async () => {
    const { key: apiKey }: { key: string; user: SpecUser } = upstream.addUser();
    const key = randomUUID();
    const send = () => airtime(apiKey, key, '08031113333', 350);
    const stateOf = async () =>
      (await facade.services.db.select().from(facadeKeys).where(eq(facadeKeys.key, key)))[0]?.state;
    upstream.misbehavingPath = AIRTIME;
    try {
      upstream.misbehaviour = 'timeout';
      expect((await send()).errors?.[0]?.extensions.code).toBe('UPSTREAM_TIMEOUT');
      expect(await stateOf()).toBe('unknown');
      // A refusal "for now" of the retry says nothing of the first send, which may have been taken.
      upstream.misbehaviour = 'rate-limit';
      expect((await send()).errors?.[0]?.extensions.code).toBe('RATE_LIMITED');
      expect(await stateOf()).toBe('unknown');
      // The upstream asked for 7 s: the partner's calls are refused until then.
      clock.advance(7_000);
      upstream.misbehaviour = 'unauthorized';
      expect((await send()).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
      expect(await stateOf()).toBe('unknown');
    } finally {
      upstream.misbehaviour = undefined;
      upstream.misbehavingPath = undefined;
    }
    const answered = await send();
    expect(answered.errors).toBeUndefined();
    expect(await stateOf()).toBe('succeeded');
    expect(await send()).toEqual(answered);
  });
});

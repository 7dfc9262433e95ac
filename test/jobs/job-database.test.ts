import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onDatabase } from '../../src/db/database-binding.js';
import { fencedOf, jobsOf } from '../../src/db/pool-routing.js';
import { ledgerHolds } from '../../src/db/ledger-schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { JobRunner } from '../../src/domain/jobs/job-runner.js';
import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import { placeHold } from '../../src/domain/money/holds.js';
import { SANDBOX_PAYMENTS } from '../../src/domain/payments/sandbox-payments-provider.js';
import { jobHandlersOf } from '../../src/workers.js';
import { createTestApp, seedTenant, startTestApp, type StartedTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { rest } from '../helpers/rest.js';
import { balanceOf } from '../helpers/wallet.js';

/**
 * A job's handler reaches the database through the services it holds; the runner binds them to
 * the job's fenced handle on the jobs pool (database-binding.ts). Nothing it reaches may keep the
 * application's handle: that statement would run unfenced, on the request pool.
 */
describe('the database a job runs on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('every handler of the gateway, bound to a job handle, reaches no object that holds the application handle', () => {
    const handle = {};
    const handlers = jobHandlersOf(t.services);
    let rebound = 0;
    for (const handler of handlers) {
      const bound = onDatabase(handler, t.services.db, () => handle);
      if (bound !== handler) rebound += 1;
      const left = pathsTo(bound, t.services.db);
      expect(left, `${handler.kind} still reaches the application's handle`).toEqual([]);
    }
    // Every handler holds the database through its services.
    expect(rebound).toBe(handlers.length);
  });

  it("custodial wallets a job creates are told to the incoming watch through the job's handle", () => {
    const handle = {};
    const bound = onDatabase(t.services.solanaWallets, t.services.db, () => handle) as unknown as {
      arrivals: { db: unknown };
    };
    expect(bound.arrivals.db).toBe(handle);
  });

  it('a bound service keeps its state in one place: what a job writes through it, the original sees', () => {
    class Checker {
      last: string | undefined;
      constructor(readonly db: unknown) {}
      run(result: string) {
        this.last = result;
        return this.db;
      }
    }
    const cache = new Map<string, number>();
    const checker = new Checker(t.services.db);
    const service = { checker, cache, name: 'service' };
    const handle = {};
    const bound = onDatabase(service, t.services.db, () => handle);
    expect(bound.checker.run('done')).toBe(handle);
    expect(checker.last).toBe('done');
    expect(checker.db).toBe(t.services.db);
    bound.cache.set('k', 1);
    expect(cache.get('k')).toBe(1);
    expect(bound.name).toBe('service');
  });
});

/** Property paths from `root` to `target` (own and inherited enumerable properties, services only). */
function pathsTo(root: object, target: object): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const walk = (node: object, path: string, depth: number) => {
    if (seen.has(node) || depth > 8) return;
    seen.add(node);
    for (const key in node) {
      const value = (node as Record<string, unknown>)[key];
      if (value === target) found.push(`${path}.${key}`);
      else if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Map))
        walk(value, `${path}.${key}`, depth + 1);
    }
  };
  walk(root, 'handler', 0);
  return found;
}

/**
 * The same, at run time: the application's handle refuses every statement while the runner runs
 * money jobs, which must still do their work (their statements go through their jobs' handles).
 */
describe.skipIf(!onPostgres)('money jobs never use the application handle (PostgreSQL)', () => {
  const clock = new ManualClock(new Date());
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ clock, isolated: true, config: { RATE_LIMIT_PER_MINUTE: 100_000 } });
  });
  afterAll(() => s.t.close());

  /** Runs `work` with the application's handle refusing every statement; returns what it tried. */
  /**
   * Runs `work` with the application handle refused to it: a call made from `work` (in its async
   * context) is recorded and throws. Calls from elsewhere (the app's own readiness check, on its
   * timer) go through: on a busy machine `work` lasts long enough for one to land in it.
   */
  async function withApplicationHandleRefused<T>(work: () => Promise<T>): Promise<{ value: T; refused: string[] }> {
    const db = s.t.services.db as unknown as Record<string, unknown>;
    const refused: string[] = [];
    const inWork = new AsyncLocalStorage<true>();
    const refuse = (target: Record<string, unknown>, name: string, label: string) => {
      const original = target[name] as (...args: unknown[]) => unknown;
      return function (this: unknown, ...args: unknown[]) {
        if (!inWork.getStore()) return original.apply(this, args);
        refused.push(label);
        throw new Error(`the application handle was used by a job (${label})`);
      };
    };
    const saved = new Map<string, unknown>();
    for (const name of ['execute', 'select', 'selectDistinct', 'insert', 'update', 'delete', 'transaction', 'with']) {
      saved.set(name, db[name]);
      db[name] = refuse(db, name, name);
    }
    // The pool itself, patched in place: plain-SQL runners keep a reference to it.
    const client = db.$client as Record<string, unknown>;
    const clientSaved = new Map<string, unknown>();
    for (const name of ['query', 'connect']) {
      clientSaved.set(name, Object.hasOwn(client, name) ? client[name] : undefined);
      client[name] = refuse(client, name, `$client.${name}`);
    }
    try {
      return { value: await inWork.run(true, work), refused };
    } finally {
      for (const [name, value] of saved) db[name] = value;
      for (const [name, value] of clientSaved) {
        if (value === undefined) delete client[name];
        else client[name] = value;
      }
    }
  }

  it('a sandbox deposit arrives and an expired hold is released with the application handle refused', async () => {
    const { services } = s.t;
    expect(jobsOf(services.db)).not.toBe(services.db);
    expect(fencedOf(services.db, { id: randomUUID(), leaseToken: randomUUID() })).not.toBe(services.db);
    const reference = `DEP-bound-${randomUUID().slice(0, 8)}`;
    const started = await rest(s.t, s.tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/deposits/bank-transfer', {
      amount: 1200,
      reference,
    });
    expect(started.statusCode, started.body).toBe(201);
    // A hold of another tenant, expiring in a minute.
    const { user } = await seedTenant(services);
    await services.db.transaction((tx) =>
      ledger.post(tx, {
        environment: 'sandbox',
        kind: 'test-funding',
        reference: randomUUID(),
        lines: [
          { account: systemAccount('sandbox', 'provider_clearing'), amount: -5_000n },
          { account: walletOf('sandbox', user.id), amount: 5_000n },
        ],
      }),
    );
    const holdId = await services.db.transaction((tx) =>
      placeHold(tx, {
        environment: 'sandbox',
        userId: user.id,
        amount: 2_000n,
        reference: `HOLD-${randomUUID()}`,
        expiresAt: new Date(clock.now().getTime() + 60_000),
      }),
    );
    clock.advance(Math.max(SANDBOX_PAYMENTS.arrivalSeconds * 1000, 61_000));

    const errors: unknown[] = [];
    const runner = new JobRunner(services.db, clock, jobHandlersOf(services), {
      workerId: 'bound',
      onError: (error) => errors.push(error),
    });
    const { refused } = await withApplicationHandleRefused(() => runner.runDueJobs());
    expect(refused).toEqual([]);
    expect(errors).toEqual([]);

    const deposit = await rest(s.t, s.tenant.keys.READ_ONLY)('GET', `/api/v1/wallet/deposits/${reference}`);
    expect(deposit.json().data.status).toBe('COMPLETED');
    expect(await balanceOf(s.t, s.tenant)).toMatchObject({ availableKobo: 120_000 });
    const [hold] = await services.db.select().from(ledgerHolds).where(eq(ledgerHolds.id, holdId));
    expect(hold?.status).toBe('released');
    expect(await ledger.balances(services.db, 'sandbox', user.id)).toEqual({ available: 5_000n, held: 0n });

    // The jobs pool's connections went back as they came: no wrapper left on them (one left per
    // fenced transaction would pile up on a busy connection).
    const jobsPool = (
      fencedOf(services.db, { id: randomUUID(), leaseToken: randomUUID() }) as unknown as {
        $client: { target: { _clients: object[] } };
      }
    ).$client.target;
    expect(jobsPool._clients.length).toBeGreaterThan(0);
    for (const connection of jobsPool._clients) expect(Object.hasOwn(connection, 'query')).toBe(false);
  });

  it("a fenced handle's client fences its transaction however it is taken, as a promise or to a callback", async () => {
    type Client = { query(text: string): Promise<unknown>; release(error?: Error): void };
    const pool = (
      fencedOf(s.t.services.db, { id: randomUUID(), leaseToken: randomUUID() }) as unknown as {
        $client: {
          connect(callback?: (error: unknown, client: Client, done: (error?: Error) => void) => void): unknown;
        };
      }
    ).$client;
    const viaPromise = (await pool.connect()) as Client;
    await expect(viaPromise.query('begin')).rejects.toThrow(/lease/i);
    const viaCallback = await new Promise<{ client: Client; done: (error?: Error) => void }>((resolve, reject) =>
      pool.connect((error, client, done) => (error ? reject(error) : resolve({ client, done }))),
    );
    // A lease that is not held: the transaction is refused, and the client goes back on its own.
    await expect(viaCallback.client.query('begin')).rejects.toThrow(/lease/i);
  });

  it('a fenced client whose fence fails for another reason than a lost lease is discarded, not pooled', async () => {
    type Client = { query(text: string): Promise<unknown> };
    const fenced = (
      fencedOf(s.t.services.db, { id: 'not-a-uuid', leaseToken: randomUUID() }) as unknown as {
        $client: { connect(): Promise<Client>; target: { _clients: object[] } };
      }
    ).$client;
    const client = await fenced.connect();
    await expect(client.query('begin')).rejects.toThrow(/uuid/i);
    expect(fenced.target._clients).not.toContain(client);
    // A lost lease leaves a healthy connection: it goes back to the pool.
    const lost = (
      fencedOf(s.t.services.db, { id: randomUUID(), leaseToken: randomUUID() }) as unknown as {
        $client: { connect(): Promise<Client>; target: { _clients: object[] } };
      }
    ).$client;
    const healthy = await lost.connect();
    await expect(healthy.query('begin')).rejects.toThrow(/lease/i);
    expect(lost.target._clients).toContain(healthy);
  });

  it('a routed client released before any query goes back without a wrapper', async () => {
    const pool = (
      s.t.services.db as unknown as {
        $client: { connect(): Promise<{ release(): void }>; distinct(): Array<{ _clients: object[] }> };
      }
    ).$client;
    const client = await pool.connect();
    client.release();
    expect(Object.hasOwn(client, 'query')).toBe(false);
  });
});

import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { RetentionPruneHandler } from '../../src/domain/retention/retention-jobs.js';
import { pruneHistory } from '../../src/domain/retention/retention.js';
import { ago, DAY_MS, operationWithHistory, RETENTION_NOW, retentionDatabase } from '../helpers/retention.js';

const NOW = RETENTION_NOW;
const DAY = DAY_MS;
const POLICY = { eventsDays: 30, jobsDays: 7, idempotencyHours: 24, batchSize: 2 };

describe('retention of state histories and sandbox signatures', () => {
  const f = retentionDatabase('h');

  const operation = (status: string, updatedAt: string, moves: Array<[string, string, string]>) =>
    operationWithHistory(f, status, updatedAt, moves);
  const history = async (operationId: string) =>
    (
      await queryRows<{ n: number }>(
        f.db,
        sql`select count(*)::int as n from operation_transitions where kind = 'transaction' and operation_id = ${operationId}`,
      )
    )[0]!.n;
  const signature = async (createdAt: string) => {
    const value = `sig-${randomUUID()}`;
    await f.db.execute(sql`insert into solana_sandbox_signatures (network, signature, version, created_at)
      values ('devnet', ${value}, 1, ${createdAt}::timestamptz)`);
    return value;
  };
  const signatureKept = async (value: string) =>
    (await queryRows(f.db, sql`select 1 from solana_sandbox_signatures where signature = ${value}`)).length > 0;

  it('prunes the whole history of operations finished before the window, and keeps every open one', async () => {
    const finishedLongAgo = await operation('COMPLETED', ago(100 * DAY), [
      ['PENDING', 'PENDING', ago(101 * DAY)],
      ['PENDING', 'COMPLETED', ago(100 * DAY)],
    ]);
    const failedLongAgo = await operation('FAILED', ago(95 * DAY), [['PENDING', 'FAILED', ago(95 * DAY)]]);
    const stillOpen = await operation('PENDING', ago(150 * DAY), [['PENDING', 'PENDING', ago(150 * DAY)]]);
    // Opened long ago, finished inside the window: its old first move stays with the rest.
    const finishedRecently = await operation('COMPLETED', ago(10 * DAY), [
      ['PENDING', 'PENDING', ago(150 * DAY)],
      ['PENDING', 'COMPLETED', ago(10 * DAY)],
    ]);

    const pruned = await pruneHistory(f.db, NOW, { ...POLICY, historyDays: 90 });
    // At least these (on PGlite the worker's database also holds older test files' rows, old by this
    // clock too); which went and which stayed is checked one by one.
    expect(pruned.operationTransitions).toBeGreaterThanOrEqual(3);
    expect(await history(finishedLongAgo)).toBe(0);
    expect(await history(failedLongAgo)).toBe(0);
    expect(await history(stillOpen)).toBe(1);
    expect(await history(finishedRecently)).toBe(2);

    // A second pass finds nothing more; a window under 30 days is taken as 30.
    const finished20DaysAgo = await operation('COMPLETED', ago(20 * DAY), [['PENDING', 'COMPLETED', ago(20 * DAY)]]);
    expect((await pruneHistory(f.db, NOW, { ...POLICY, historyDays: 1 })).operationTransitions).toBe(0);
    expect(await history(finished20DaysAgo)).toBe(1);
    expect(await history(finishedRecently)).toBe(2);
  });

  it('prunes sandbox signatures older than the window, except a pending chain send’s', async () => {
    const old = await signature(ago(8 * DAY));
    const older = await signature(ago(30 * DAY));
    const recent = await signature(ago(6 * DAY));
    const pendingSend = await signature(ago(30 * DAY));
    await f.db.execute(sql`insert into chain_sends (user_id, environment, family, network, kind, from_address,
        to_address, amount_raw, decimals, tx_hash, wire, valid_through_height)
      values (${f.userId}, 'sandbox', 'solana', 'devnet', 'native', 'from', 'to', 1, 9, ${pendingSend}, 'wire', 1)`);

    const pruned = await pruneHistory(f.db, NOW, { ...POLICY, sandboxSignaturesDays: 7 });
    expect(pruned.sandboxSignatures).toBeGreaterThanOrEqual(2);
    expect(await signatureKept(old)).toBe(false);
    expect(await signatureKept(older)).toBe(false);
    expect(await signatureKept(recent)).toBe(true);
    expect(await signatureKept(pendingSend)).toBe(true);
    expect((await pruneHistory(f.db, NOW, { ...POLICY, sandboxSignaturesDays: 7 })).sandboxSignatures).toBe(0);
  });

  it('the pruning job prunes both, by the policy it was given', async () => {
    const finished = await operation('FAILED', ago(40 * DAY), [['PENDING', 'FAILED', ago(40 * DAY)]]);
    const old = await signature(ago(3 * DAY));
    const job = new RetentionPruneHandler(
      f.db,
      new ManualClock(NOW),
      { ...POLICY, historyDays: 30, sandboxSignaturesDays: 2 },
      3_600_000,
    );
    expect(await job.run()).toEqual({ status: 'retry', at: new Date(NOW.getTime() + 3_600_000) });
    expect(await history(finished)).toBe(0);
    expect(await signatureKept(old)).toBe(false);
  });
});

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { FINISHED, historyBatch, pruneHistory } from '../../src/domain/retention/retention.js';
import { onPostgres } from '../helpers/database.js';
import { ago, DAY_MS, operationWithHistory, RETENTION_NOW, retentionDatabase } from '../helpers/retention.js';

const TRANSACTION = FINISHED.find((f) => f.kind === 'transaction')!;

describe('retention of state histories: finding old history by its age', () => {
  const fixture = retentionDatabase('plan');

  it('has an index on (kind, at), and the prune of a kind’s history plans through it', async () => {
    const { db, userId } = fixture;
    const indexes = await queryRows<{ indexdef: string }>(
      db,
      sql`select indexdef from pg_indexes where tablename = 'operation_transitions'
        and indexname = 'operation_transitions_kind_at_idx'`,
    );
    expect(indexes.map((i) => i.indexdef)).toEqual([expect.stringMatching(/\(kind, at\)/)]);
    // The plan is read on PostgreSQL only, in a database of the file's own: on PGlite the worker's
    // database holds other files' rows, and with few old finished operations among them the planner
    // rightly prefers another plan.
    if (!onPostgres) return;

    // Many operations finished recently (kept), a few long ago: the prune must go straight to the
    // old history rather than read every finished operation of the kind.
    await db.execute(sql`with ops as (
        insert into wallet_transactions (user_id, environment, type, status, amount, reference, created_at, updated_at)
        select ${userId}, 'sandbox', 'DEPOSIT', 'COMPLETED', 100, 'plan-' || gen_random_uuid(),
          ${ago(2 * DAY_MS)}::timestamptz, ${ago(DAY_MS)}::timestamptz
        from generate_series(1, 20000)
        returning id
      )
      insert into operation_transitions (kind, operation_id, from_status, to_status, at)
      select 'transaction', id, 'PENDING', 'COMPLETED', ${ago(DAY_MS)}::timestamptz from ops`);
    await db.execute(sql`analyze operation_transitions`);
    await db.execute(sql`analyze wallet_transactions`);
    const before = sql`${new Date(RETENTION_NOW.getTime() - 90 * DAY_MS).toISOString()}::timestamptz`;
    const plan = (await queryRows<{ 'QUERY PLAN': string }>(db, sql`explain ${historyBatch(TRANSACTION, before, 500)}`))
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toContain('operation_transitions_kind_at_idx');
  });

  it('prunes in batches of the policy’s size until a batch comes back short', async () => {
    const ids = await Promise.all(
      [1, 2, 3, 4, 5].map(() =>
        operationWithHistory(fixture, 'COMPLETED', ago(100 * DAY_MS), [['PENDING', 'COMPLETED', ago(100 * DAY_MS)]]),
      ),
    );
    // Each statement deletes at most 2: five go only if the batches go on until one is short.
    const pruned = await pruneHistory(fixture.db, RETENTION_NOW, {
      eventsDays: 30,
      jobsDays: 7,
      idempotencyHours: 24,
      batchSize: 2,
      historyDays: 90,
    });
    expect(pruned.operationTransitions).toBeGreaterThanOrEqual(5);
    const left = await queryRows<{ n: number }>(
      fixture.db,
      sql`select count(*)::int as n from operation_transitions where operation_id in (${sql.join(
        ids.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`,
    );
    expect(left[0]!.n).toBe(0);
  });
});

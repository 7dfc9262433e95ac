import { and, asc, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { testClocks } from '../../db/sandbox-schema.js';
import type { SandboxAccount } from './sandbox-principal.js';

export type TestClockRow = typeof testClocks.$inferSelect;

/** The SQL of test clocks. Every read and write but the registry's load is scoped to its sandbox account. */
export const testClockStore = {
  insert(db: Executor, owner: SandboxAccount, name: string): Promise<TestClockRow> {
    return db
      .insert(testClocks)
      .values({ userId: owner.userId, environment: owner.environment, name })
      .returning()
      .then((rows) => rows[0]!);
  },

  find(db: Executor, owner: SandboxAccount, id: string): Promise<TestClockRow | undefined> {
    return db
      .select()
      .from(testClocks)
      .where(
        and(eq(testClocks.id, id), eq(testClocks.userId, owner.userId), eq(testClocks.environment, owner.environment)),
      )
      .then((rows) => rows[0]);
  },

  list(db: Executor, owner: SandboxAccount): Promise<TestClockRow[]> {
    return db
      .select()
      .from(testClocks)
      .where(and(eq(testClocks.userId, owner.userId), eq(testClocks.environment, owner.environment)))
      .orderBy(asc(testClocks.createdAt), asc(testClocks.id));
  },

  /** Every attached clock (the registry's load): a small table, sandbox accounts only. */
  attached(db: Executor): Promise<Array<Pick<TestClockRow, 'id' | 'userId' | 'offsetMs'>>> {
    return db
      .select({ id: testClocks.id, userId: testClocks.userId, offsetMs: testClocks.offsetMs })
      .from(testClocks)
      .where(isNotNull(testClocks.attachedAt));
  },

  /** One clock by id, whoever owns it: for the runner, about to run a job the clock's time drives. */
  byId(db: Executor, id: string): Promise<TestClockRow | undefined> {
    return db
      .select()
      .from(testClocks)
      .where(eq(testClocks.id, id))
      .then((rows) => rows[0]);
  },

  /** Attaches or detaches; a second attached clock of the account breaks the unique index (23505). */
  setAttached(db: Executor, id: string, at: Date | null, now: Date): Promise<TestClockRow | undefined> {
    return db
      .update(testClocks)
      .set({ attachedAt: at, updatedAt: now })
      .where(eq(testClocks.id, id))
      .returning()
      .then((rows) => rows[0]);
  },

  /** Takes the clock's advance lease unless another advance holds it; undefined when one does. */
  claimAdvance(db: Executor, id: string, now: Date, until: Date): Promise<TestClockRow | undefined> {
    return db
      .update(testClocks)
      .set({ advancingUntil: until, updatedAt: now })
      .where(and(eq(testClocks.id, id), or(isNull(testClocks.advancingUntil), lt(testClocks.advancingUntil, now))))
      .returning()
      .then((rows) => rows[0]);
  },

  /** Moves the clock forward by `byMs` (never back). */
  addOffset(db: Executor, id: string, byMs: number, now: Date): Promise<TestClockRow | undefined> {
    return db
      .update(testClocks)
      .set({ offsetMs: sql`${testClocks.offsetMs} + ${Math.max(0, Math.round(byMs))}`, updatedAt: now })
      .where(eq(testClocks.id, id))
      .returning()
      .then((rows) => rows[0]);
  },

  releaseAdvance(db: Executor, id: string, now: Date): Promise<TestClockRow | undefined> {
    return db
      .update(testClocks)
      .set({ advancingUntil: null, updatedAt: now })
      .where(eq(testClocks.id, id))
      .returning()
      .then((rows) => rows[0]);
  },

  delete(db: Executor, id: string): Promise<void> {
    return db
      .delete(testClocks)
      .where(eq(testClocks.id, id))
      .then(() => undefined);
  },
};

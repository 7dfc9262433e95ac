import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { operationTransitions } from '../../db/lifecycle-schema.js';
import { recordEvent } from '../events/outbox.js';
import type { Lifecycle } from './lifecycle.js';

/** A move the kind's table does not list: a bug in the caller, never a partner's input. */
export class IllegalTransition extends Error {
  constructor(kind: string, from: string, to: string) {
    super(`A ${kind} cannot move from ${from} to ${to}.`);
    this.name = 'IllegalTransition';
  }
}

export const isLegal = <Row extends { status: string }>(
  lifecycle: Lifecycle<Row>,
  from: Row['status'],
  to: Row['status'],
): boolean => lifecycle.moves[from]?.[to] !== undefined;

/**
 * Moves one operation from `from` to `to`, in the caller's transaction: refuses a move the kind's
 * table does not list, updates only while the row is still at `from` (so of two racing moves one
 * wins and the other gets undefined), bumps its version, keeps the move in the history and records
 * the move's events. `changes` are the other columns the move sets.
 */
export async function transition<Row extends { id: string; status: string; userId: string; environment: string }>(
  tx: Executor,
  lifecycle: Lifecycle<Row>,
  id: string,
  from: Row['status'],
  to: Row['status'],
  at: Date,
  changes: Partial<Row> = {},
): Promise<Row | undefined> {
  const events = lifecycle.moves[from]?.[to];
  if (events === undefined) throw new IllegalTransition(lifecycle.kind, from, to);
  const { table } = lifecycle;
  const [row] = (await tx
    .update(table)
    .set({
      ...changes,
      status: to,
      updatedAt: at,
      ...(lifecycle.versioned ? { version: sql`${table.version} + 1` } : {}),
    })
    .where(and(eq(table.id, id), eq(table.status, from)))
    .returning()) as Row[];
  if (!row) return undefined;
  await tx
    .insert(operationTransitions)
    .values({ kind: lifecycle.kind, operationId: id, fromStatus: from, toStatus: to, at });
  for (const type of events) {
    await recordEvent(
      tx,
      {
        type,
        userId: row.userId,
        environment: row.environment as never,
        data: lifecycle.data?.(row) as Record<string, unknown>,
      },
      at,
    );
  }
  return row;
}

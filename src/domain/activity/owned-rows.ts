import { and, type Column, eq, inArray, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Environment } from '../auth/permissions.js';
import { isUuid } from '../ids.js';
import type { Executor } from '../../db/client.js';

/** Whose rows a lookup may return: one user's, in one environment. */
export interface Owner {
  userId: string;
  environment: Environment;
}

type OwnedTable = PgTable & { id: Column; userId: Column; environment: Column };
type ReferencedTable = OwnedTable & { reference: Column };

const ownedBy = (table: OwnedTable, owner: Owner) =>
  and(eq(table.userId, owner.userId), eq(table.environment, owner.environment));

/**
 * The owner's rows among `ids`, in one statement: what per-request loaders batch into. Ids that
 * are not uuids, or rows of another user or environment, are simply absent, so a caller cannot
 * tell someone else's record from a missing one. `only` narrows a shared table (one family's chain sends).
 */
export async function ownedRowsByIds<T extends OwnedTable>(
  db: Executor,
  table: T,
  owner: Owner,
  ids: readonly string[],
  only?: SQL,
): Promise<Array<T['$inferSelect']>> {
  const wanted = [...new Set(ids.filter(isUuid))];
  if (wanted.length === 0) return [];
  return (await db
    .select()
    .from(table as PgTable)
    .where(and(ownedBy(table, owner), inArray(table.id, wanted), only))) as Array<T['$inferSelect']>;
}

/** The owner's rows among `references` (unique per owner and environment), in one statement. */
export async function ownedRowsByReferences<T extends ReferencedTable>(
  db: Executor,
  table: T,
  owner: Owner,
  references: readonly string[],
): Promise<Array<T['$inferSelect']>> {
  const wanted = [...new Set(references)];
  if (wanted.length === 0) return [];
  return (await db
    .select()
    .from(table as PgTable)
    .where(and(ownedBy(table, owner), inArray(table.reference, wanted)))) as Array<T['$inferSelect']>;
}

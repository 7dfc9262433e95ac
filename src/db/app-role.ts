import { sql } from 'drizzle-orm';
import type { Executor } from './client.js';

/** Tables whose rows, once written, no one may change: corrections are new rows (reversals). */
export const APPEND_ONLY_TABLES = ['ledger_postings', 'ledger_entries', 'audit_records'] as const;

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Grants the role the application connects as what it needs, and nothing that could rewrite
 * history: read and write on every table, but no UPDATE, DELETE or TRUNCATE on the append-only
 * ledger tables (beside the trigger that refuses them for every role). Run by the tables' owner
 * after migrations (`npm run admin -- grant-app-role --role <name>`), again after each upgrade,
 * since new tables need their grants. The owner (who runs migrations) keeps its rights.
 */
export async function grantApplicationRole(db: Executor, role: string): Promise<void> {
  if (!ROLE_NAME.test(role)) throw new Error('A role name is lower-case letters, digits and underscores.');
  // The name was checked against a strict pattern above, so quoting it is enough.
  const r = sql.raw(`"${role}"`);
  const statements = [
    sql`grant usage on schema public to ${r}`,
    sql`grant select, insert, update, delete on all tables in schema public to ${r}`,
    sql`grant usage, select on all sequences in schema public to ${r}`,
    // Start-up checks the migrations journal (and applies none): reading it is enough.
    sql`grant usage on schema drizzle to ${r}`,
    sql`grant select on all tables in schema drizzle to ${r}`,
    sql`revoke update, delete, truncate on ${sql.raw(APPEND_ONLY_TABLES.join(', '))} from ${r}`,
  ];
  for (const statement of statements) await db.execute(statement);
}

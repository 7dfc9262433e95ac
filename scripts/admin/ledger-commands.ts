import type { DatabaseHandle } from '../../src/db/client.js';
import { grantApplicationRole } from '../../src/db/app-role.js';
import type { LedgerCheckResult } from '../../src/domain/ledger/ledger-check.js';
import type { Services } from '../../src/services.js';

type Output = { json: unknown; text: string };

/** Describes a check result for a person: the verdict, the counts, then each listed offender. */
export function describeLedgerCheck(result: LedgerCheckResult): string {
  const lines = [
    `Ledger check ${result.ok ? 'OK' : 'FAILED'} at ${result.finishedAt.toISOString()}: ${result.accountsChecked} accounts, ${result.postingsChecked} postings`,
  ];
  if (result.mismatchedAccountCount > 0) {
    lines.push(`${result.mismatchedAccountCount} account(s) whose balance differs from the sum of their entries:`);
    for (const a of result.mismatchedAccounts)
      lines.push(`  ${a.accountId}  ${a.key}  balance ${a.balance} kobo, entries ${a.entriesSum} kobo`);
  }
  if (result.unbalancedPostingCount > 0) {
    lines.push(`${result.unbalancedPostingCount} posting(s) whose entries do not sum to zero:`);
    for (const p of result.unbalancedPostings)
      lines.push(`  ${p.postingId}  ${p.kind}/${p.reference}  sum ${p.sum} kobo`);
  }
  return lines.join('\n');
}

/** `ledger-check [--latest]`: runs the invariant check now (or shows the stored latest result). */
export async function ledgerCheckCommand(services: Services, latestOnly: boolean): Promise<Output & { ok: boolean }> {
  const result = latestOnly ? await services.ledgerCheck.latest() : await services.ledgerCheck.run();
  if (!result) return { json: null, text: 'No ledger check has run yet.', ok: true };
  return { json: result, text: describeLedgerCheck(result), ok: result.ok };
}

/** `grant-app-role --role <name>`: PostgreSQL only; run as the tables' owner after migrations. */
export async function grantAppRoleCommand(database: DatabaseHandle, role: string): Promise<Output> {
  if (database.driver !== 'postgres')
    throw new Error('grant-app-role needs PostgreSQL (DATABASE_URL): the embedded database has a single role.');
  await grantApplicationRole(database.db, role);
  return {
    json: { role },
    text: `Granted ${role} read and write on every table, without UPDATE, DELETE or TRUNCATE on the ledger's posted rows`,
  };
}

/** `audit-verify`: walks the audit chain; exit code 4 when a record was edited or removed. */
export async function auditVerifyCommand(services: Services): Promise<Output & { ok: boolean }> {
  const result = await services.auditLog.verify();
  const lines = [
    `Audit chain ${result.ok ? 'OK' : 'BROKEN'}: ${result.count} record(s), head ${result.headHash}`,
    ...result.breaks.map((b) => `  seq ${b.seq}  ${b.id}  ${b.problem}: ${b.detail}`),
  ];
  return { json: result, text: lines.join('\n'), ok: result.ok };
}

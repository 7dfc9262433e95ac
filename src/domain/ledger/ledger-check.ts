import { desc, sql } from 'drizzle-orm';
import { ledgerCheckRuns } from '../../db/books-schema.js';
import { type Database, queryRows } from '../../db/client.js';
import { toBigInt, toSafeNumber } from '../../db/columns.js';
import type { Clock } from '../clock.js';

/** How many offenders of each kind a run keeps by name (the counts are always exact). */
const LISTED = 100;

export interface MismatchedAccount {
  accountId: string;
  key: string;
  /** Kobo, as decimal strings (JSON has no bigint). */
  balance: string;
  entriesSum: string;
}

export interface UnbalancedPosting {
  postingId: string;
  kind: string;
  reference: string;
  sum: string;
}

export interface LedgerCheckResult {
  id: string;
  startedAt: Date;
  finishedAt: Date;
  ok: boolean;
  accountsChecked: number;
  postingsChecked: number;
  mismatchedAccountCount: number;
  unbalancedPostingCount: number;
  mismatchedAccounts: MismatchedAccount[];
  unbalancedPostings: UnbalancedPosting[];
}

/**
 * The ledger's invariants, checked against the stored rows: each account's cached balance equals
 * the sum of its entries, and each posting's entries sum to zero. The posting path keeps both by
 * construction; this catches anything that went around it (a hand edit, a restore, a bug).
 */
export class LedgerCheck {
  private last: LedgerCheckResult | undefined;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** Runs the check, stores its result and returns it. Read-only on the ledger itself. */
  async run(): Promise<LedgerCheckResult> {
    const startedAt = this.clock.now();
    const accounts = await queryRows<{ id: string; key: string; balance: unknown; entries_sum: unknown }>(
      this.db,
      sql`/* ledgerCheckAccounts */
        select a.id, a.key, a.balance, coalesce(e.total, 0) as entries_sum
        from ledger_accounts a
        left join (select account_id, sum(amount) as total from ledger_entries group by account_id) e
          on e.account_id = a.id
        where a.balance <> coalesce(e.total, 0)
        order by a.id`,
    );
    const postings = await queryRows<{ id: string; kind: string; reference: string; total: unknown }>(
      this.db,
      sql`/* ledgerCheckPostings */
        select p.id, p.kind, p.reference, coalesce(sum(e.amount), 0) as total
        from ledger_postings p left join ledger_entries e on e.posting_id = p.id
        group by p.id, p.kind, p.reference
        having coalesce(sum(e.amount), 0) <> 0 or count(e.id) < 2
        order by p.id`,
    );
    const [counts] = await queryRows<{ accounts: unknown; postings: unknown }>(
      this.db,
      sql`/* ledgerCheckCounts */
        select (select count(*) from ledger_accounts) as accounts, (select count(*) from ledger_postings) as postings`,
    );
    const mismatchedAccounts = accounts.slice(0, LISTED).map((r) => ({
      accountId: r.id,
      key: r.key,
      balance: toBigInt(r.balance).toString(),
      entriesSum: toBigInt(r.entries_sum).toString(),
    }));
    const unbalancedPostings = postings.slice(0, LISTED).map((r) => ({
      postingId: r.id,
      kind: r.kind,
      reference: r.reference,
      sum: toBigInt(r.total).toString(),
    }));
    const [row] = await this.db
      .insert(ledgerCheckRuns)
      .values({
        startedAt,
        finishedAt: this.clock.now(),
        ok: accounts.length === 0 && postings.length === 0,
        accountsChecked: toSafeNumber(counts?.accounts ?? 0),
        postingsChecked: toSafeNumber(counts?.postings ?? 0),
        mismatchedAccounts,
        mismatchedAccountCount: accounts.length,
        unbalancedPostings,
        unbalancedPostingCount: postings.length,
      })
      .returning();
    this.last = toResult(row!);
    return this.last;
  }

  /** The newest stored result (from any process), or undefined before the first run. */
  async latest(): Promise<LedgerCheckResult | undefined> {
    const [row] = await this.db.select().from(ledgerCheckRuns).orderBy(desc(ledgerCheckRuns.finishedAt)).limit(1);
    if (row) this.last = toResult(row);
    return row ? this.last : undefined;
  }

  /** The last result this process ran or read, without a query: for a metrics gauge's collect(). */
  lastKnown(): LedgerCheckResult | undefined {
    return this.last;
  }
}

function toResult(row: typeof ledgerCheckRuns.$inferSelect): LedgerCheckResult {
  return {
    id: row.id,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    ok: row.ok,
    accountsChecked: row.accountsChecked,
    postingsChecked: row.postingsChecked,
    mismatchedAccountCount: row.mismatchedAccountCount,
    unbalancedPostingCount: row.unbalancedPostingCount,
    mismatchedAccounts: row.mismatchedAccounts as MismatchedAccount[],
    unbalancedPostings: row.unbalancedPostings as UnbalancedPosting[],
  };
}

/**
 * The figures a metrics gauge exports (`ledger_check_ok`, `…_mismatched_accounts`,
 * `…_unbalanced_postings`, `…_last_run_timestamp_seconds`); undefined before any run is known.
 */
export function ledgerCheckGauges(result: LedgerCheckResult | undefined) {
  if (!result) return undefined;
  return {
    ok: result.ok ? 1 : 0,
    mismatchedAccounts: result.mismatchedAccountCount,
    unbalancedPostings: result.unbalancedPostingCount,
    lastRunTimestampSeconds: Math.floor(result.finishedAt.getTime() / 1000),
  };
}

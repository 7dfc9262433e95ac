import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sourceFiles } from './module-imports.js';
import { describe, expect, it } from 'vitest';

/**
 * The ledger's rules (a guarded move, a hold's placement, its capture or release) are written once,
 * in src/domain/ledger/: every statement that writes postings, entries or holds, or moves a balance,
 * is built from ledger/ledger-sql.ts's pieces or goes through ledger.ts. A write of those tables
 * anywhere else would be a second copy of a rule, free to drift from the first.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const LEDGER_DIR = join('src', 'domain', 'ledger');

/** SQL text or Drizzle calls that write the ledger's tables. */
const WRITES = [
  /insert\s+into\s+ledger_(postings|entries|holds)\b/i,
  /update\s+ledger_(accounts|holds)\b/i,
  /\.(insert|update)\(\s*ledger(Postings|Entries|Holds|Accounts)\s*\)/,
];

/** Each `file: pattern` of a write of the ledger's tables outside the ledger's folder. */
function ledgerWritesOutsideLedger(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    if (file.startsWith(`${LEDGER_DIR}/`)) continue;
    for (const write of WRITES) {
      const match = write.exec(text);
      if (match) found.push(`${file}: ${match[0]}`);
    }
  }
  return found;
}

describe('the ledger is the one writer of its tables', () => {
  it('no file outside src/domain/ledger/ inserts postings, entries or holds, or moves a balance', () => {
    const files = new Map(
      sourceFiles(join(ROOT, 'src')).map((path) => [relative(ROOT, path), readFileSync(path, 'utf8')] as const),
    );
    expect(files.size).toBeGreaterThan(100);
    expect(ledgerWritesOutsideLedger(files)).toEqual([]);
  });

  it('finds a planted write, in SQL text and through Drizzle, and allows the ledger its own', () => {
    const planted = new Map([
      ['src/domain/bills/bill-writes.ts', 'const s = `with p as (insert into ledger_postings (id) values ($1))`;'],
      ['src/domain/wallet/x.ts', 'await tx.update(ledgerAccounts).set({ balance: 0n });'],
      ['src/domain/ledger/ledger-sql.ts', 'insert into ledger_entries (posting_id) values ($1)'],
    ]);
    expect(ledgerWritesOutsideLedger(planted)).toEqual([
      'src/domain/bills/bill-writes.ts: insert into ledger_postings',
      'src/domain/wallet/x.ts: .update(ledgerAccounts)',
    ]);
  });
});

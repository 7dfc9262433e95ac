import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { specifiersIn } from './module-imports.js';
import { describe, expect, it } from 'vitest';

/**
 * The services of the operations with a provider call between two commits (bills, payouts,
 * deposits) give the money module (src/domain/money/held-operation.ts, keyed-open.ts) their
 * provider call, their state table and their own record's writes (through their store), and hold
 * no SQL of their own: no query builder, no statement text, no table. A payment paid from a hold
 * holds, captures and releases only through the held operation, so the rules around the key, the
 * hold and the settle are written once.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const SERVICES = [
  'src/domain/bills/bills-service.ts',
  'src/domain/wallet/payout-service.ts',
  'src/domain/wallet/deposit-service.ts',
];
/** Of those, the ones paid from a hold. */
const HELD = new Set(['src/domain/bills/bills-service.ts', 'src/domain/wallet/payout-service.ts']);

/** Why `file` may not import `specifier`; undefined when it may. */
function forbidden(file: string, specifier: string): string | undefined {
  if (specifier === 'drizzle-orm' || specifier.startsWith('drizzle-orm/')) return 'a query builder';
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(ROOT, resolve(dirname(join(ROOT, file)), specifier)).replace(/\.js$/, '.ts');
  if (target.startsWith('src/db/') && /-schema\.ts$|\/schema\.ts$/.test(target)) return 'a table';
  if (target === 'src/db/plain-sql.ts') return 'statements';
  if (HELD.has(file) && (target === 'src/domain/money/holds.ts' || target === 'src/domain/money/settle-held.ts'))
    return 'the hold or its settle outside the held operation';
  if (HELD.has(file) && target === 'src/domain/lifecycle/keyed.ts') return 'the key claim outside the held operation';
  return undefined;
}

/** `file: specifier (why)` for each forbidden import, and each piece of SQL text, in `source`. */
function violationsIn(file: string, source: string): string[] {
  const imports = specifiersIn(file, source).flatMap((specifier) => {
    const why = forbidden(file, specifier);
    return why ? [`${file}: '${specifier}' (${why})`] : [];
  });
  const text = /\b(select\s+[\w*]+.*\s+from|insert\s+into|update\s+\w+\s+set|delete\s+from)\b/i.exec(source);
  return text ? [...imports, `${file}: SQL text "${text[0]}"`] : imports;
}

describe('the services of held and keyed operations hold no SQL', () => {
  it('names a planted import and planted SQL text (the check can fail)', () => {
    const file = 'src/domain/bills/bills-service.ts';
    const source = [
      "import { eq } from 'drizzle-orm';",
      "import { billRecords } from '../../db/bills-schema.js';",
      "import { runStatement } from '../../db/plain-sql.js';",
      "import { captureHold } from '../money/holds.js';",
      "import { openKeyed } from '../lifecycle/keyed.js';",
      // Allowed: its store, the held operation, its state table.
      "import type { Executor } from '../../db/client.js';",
      "import { billStore } from './bill-store.js';",
      "import { HeldOperation } from '../money/held-operation.js';",
      "import { BILL_HELD } from './bill-lifecycle.js';",
      'const q = `update bill_records set status = $1`;',
    ].join('\n');
    expect(violationsIn(file, source)).toEqual([
      `${file}: 'drizzle-orm' (a query builder)`,
      `${file}: '../../db/bills-schema.js' (a table)`,
      `${file}: '../../db/plain-sql.js' (statements)`,
      `${file}: '../money/holds.js' (the hold or its settle outside the held operation)`,
      `${file}: '../lifecycle/keyed.js' (the key claim outside the held operation)`,
      `${file}: SQL text "update bill_records set"`,
    ]);
    // A deposit is keyed but not held: its steps may use the key claim's answer directly.
    expect(
      violationsIn('src/domain/wallet/deposit-service.ts', "import { answer } from '../lifecycle/keyed.js';"),
    ).toEqual([]);
  });

  it('the services as they are', () => {
    const found = SERVICES.flatMap((file) => violationsIn(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });
});

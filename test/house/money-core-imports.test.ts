import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { sourceFiles, specifiersIn } from './module-imports.js';
import { describe, expect, it } from 'vitest';

/**
 * `money/` and `lifecycle/` are the primitives every money path is built from (holds, key claims,
 * the reference rule, the generic state machine). They import no domain: a domain supplies its
 * state table, its event data and its writes to them, never the other way round, so a change to
 * bills or Solana cannot reach into the money core and the core reads without any domain beside it.
 *
 * A domain is any folder src/domain/<dir> outside CORE_DIRS, and any src/db/<name>-schema.ts
 * outside CORE_SCHEMAS. Files at the top of src/domain/ (errors.ts, clock.ts, ids.ts, …) are core,
 * but for REGISTRIES, which list every domain's parts.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const DOMAIN = join(ROOT, 'src', 'domain');
const DB = join(ROOT, 'src', 'db');

/**
 * Infrastructure every domain builds on; `auth` gives the Environment and the principal every layer
 * carries; `webhooks` is the event path's delivery (the relay fans events out to endpoints).
 */
const CORE_DIRS = new Set([
  'money',
  'lifecycle',
  'ledger',
  'events',
  'webhooks',
  'jobs',
  'idempotency',
  'upstream',
  'limits',
  'audit',
  'auth',
]);
/**
 * Tables of the core: operation_transitions (lifecycle), ledger checks and audit records (books),
 * list counts, the ledger's and the Idempotency-Keys' tables. schema.ts (users, keys, events, jobs)
 * does not end in `-schema.ts` and is core too.
 */
const CORE_SCHEMAS = new Set(['ledger-schema.ts', 'lifecycle-schema.ts', 'books-schema.ts', 'lists-schema.ts']);
/** Top-level files that import every domain: the list of state tables that retention reads. */
const REGISTRIES = new Set(['state-tables.ts']);
const CHECKED = ['money', 'lifecycle'].map((dir) => join(DOMAIN, dir));

/** Why `specifier`, imported by `file`, reaches a domain; undefined when it does not. */
function domainReached(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('<computed')) return 'an import whose target cannot be read';
  if (!specifier.startsWith('.')) return undefined; // packages and node: builtins
  const target = resolve(dirname(file), specifier);
  const inDomain = relative(DOMAIN, target);
  if (!inDomain.startsWith('..')) {
    const [dir, ...rest] = inDomain.split(sep);
    if (rest.length === 0) {
      const name = basename(inDomain).replace(/\.js$/, '.ts');
      return REGISTRIES.has(name) ? `the registry of every domain (src/domain/${name})` : undefined;
    }
    if (dir !== undefined && !CORE_DIRS.has(dir)) return `the ${dir} domain`;
    return undefined;
  }
  const inDb = relative(DB, target);
  if (!inDb.startsWith('..') && !inDb.includes(sep)) {
    const name = basename(inDb).replace(/\.js$/, '.ts');
    if (name.endsWith('-schema.ts') && !CORE_SCHEMAS.has(name)) return `a domain's tables (src/db/${name})`;
  }
  return undefined;
}

/** `file: specifier (why)` for each import of `source` that reaches a domain. */
function violationsIn(file: string, source: string): string[] {
  return specifiersIn(file, source).flatMap((specifier) => {
    const why = domainReached(file, specifier);
    return why ? [`${relative(ROOT, file)}: '${specifier}' (${why})`] : [];
  });
}

describe('money/ and lifecycle/ import no domain', () => {
  it('names the file and the import for every way of reaching a domain (the check can fail)', () => {
    const file = join(DOMAIN, 'money', 'sample.ts');
    const source = [
      "import { transactionStore } from '../wallet/transaction-store.js';",
      "import type { billRecords } from '../../db/bills-schema.js';",
      "export { CHAIN_SEND } from '../solana/chain-sends.js';",
      "type T = import('../offramp/catalogue.js').OfframpStatus;",
      "const later = () => import('../payments/x.js');",
      "const computed = (name: string) => import('../' + name);",
      "import { LIFECYCLES } from '../state-tables.js';",
      // Core: none of these is named.
      "import { ledger } from '../ledger/ledger.js';",
      "import { DomainError } from '../errors.js';",
      "import { operationTransitions } from '../../db/lifecycle-schema.js';",
      "import { events } from '../../db/schema.js';",
      "import type { Executor } from '../../db/client.js';",
      "import { sql } from 'drizzle-orm';",
      "import { holds } from './holds.js';",
    ].join('\n');
    expect(violationsIn(file, source)).toEqual([
      "src/domain/money/sample.ts: '../wallet/transaction-store.js' (the wallet domain)",
      "src/domain/money/sample.ts: '../../db/bills-schema.js' (a domain's tables (src/db/bills-schema.ts))",
      "src/domain/money/sample.ts: '../solana/chain-sends.js' (the solana domain)",
      "src/domain/money/sample.ts: '../offramp/catalogue.js' (the offramp domain)",
      "src/domain/money/sample.ts: '../payments/x.js' (the payments domain)",
      "src/domain/money/sample.ts: '<computed: '../' + name>' (an import whose target cannot be read)",
      "src/domain/money/sample.ts: '../state-tables.js' (the registry of every domain (src/domain/state-tables.ts))",
    ]);
  });

  it('the core lists name folders and tables that exist', () => {
    for (const dir of CORE_DIRS) expect(statSync(join(DOMAIN, dir)).isDirectory(), dir).toBe(true);
    for (const name of CORE_SCHEMAS) expect(existsSync(join(DB, name)), name).toBe(true);
    for (const name of REGISTRIES) expect(existsSync(join(DOMAIN, name)), name).toBe(true);
  });

  it('no file under src/domain/money/ or src/domain/lifecycle/ imports a domain', () => {
    const files = CHECKED.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(0);
    const found = files.flatMap((file) => violationsIn(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('nor reaches one through the core: every file money/ and lifecycle/ import, and theirs, imports no domain', () => {
    const seen = new Set<string>();
    const queue = CHECKED.flatMap(sourceFiles);
    const found: string[] = [];
    while (queue.length > 0) {
      const file = queue.shift()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const specifier of specifiersIn(file, readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.')) continue;
        const why = domainReached(file, specifier);
        if (why) found.push(`${relative(ROOT, file)}: '${specifier}' (${why})`);
        else {
          const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
          if (existsSync(target)) queue.push(target);
        }
      }
    }
    expect(seen.size).toBeGreaterThan(CHECKED.flatMap(sourceFiles).length);
    expect(found).toEqual([]);
  });
});

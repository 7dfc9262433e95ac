import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ENGINE_FREE_FILES } from '../setup/engine-free.js';
import { sourceFiles } from './module-imports.js';

/**
 * The engine-free list (test/setup/engine-free.ts) says which test files run on PGlite only because
 * PostgreSQL would run the same code again. A file belongs there exactly when nothing it imports,
 * directly or through other modules of this repository, reaches test/helpers/database.ts: that module
 * is the only reader of TEST_DATABASE and of the PostgreSQL project's database, so a file that cannot
 * reach it runs alike in both projects. Files named *.pg, *.embedded or *.browser already run on one
 * engine and are not listed.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const TEST = join(ROOT, 'test');
const ENGINE_READER = join(TEST, 'helpers', 'database.ts');

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources); undefined for a package. */
function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const path = resolve(dirname(from), specifier);
  return [path, path.replace(/\.js$/, '.ts'), `${path}.ts`].find((candidate) => existsSync(candidate));
}

const importsOf = new Map<string, string[]>();

/**
 * The modules of this repository `file` imports. TypeScript's pre-processor reads the import,
 * export and import() specifiers without building a syntax tree (a quarter of the time, over every
 * source of the repository); an import() of a computed name under test/ could name anything and
 * counts as the engine reader (outside test/, in src and scripts, it names built sources).
 */
function importedBy(file: string): string[] {
  let found = importsOf.get(file);
  if (!found) {
    const source = readFileSync(file, 'utf8');
    found = ts
      .preProcessFile(source, true, true)
      .importedFiles.flatMap(({ fileName }) => resolveRelative(file, fileName) ?? [])
      .filter((target) => /\.(ts|mjs)$/.test(target));
    if (file.startsWith(TEST + sep) && /\bimport\(\s*[^'"`\s)]/.test(source)) found.push(ENGINE_READER);
    importsOf.set(file, found);
  }
  return found;
}

/** Whether `file`, or a module of this repository it imports, directly or not, is test/helpers/database.ts. */
function reachesEngine(file: string): boolean {
  const seen = new Set([file]);
  const queue = [file];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (next === ENGINE_READER) return true;
    for (const target of importedBy(next))
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
  }
  return false;
}

const runsOnOneEngine = (path: string) => /\.(pg|embedded|browser)\.test\.ts$/.test(path);

describe('the engine-free test files', () => {
  const testFiles = sourceFiles(TEST)
    .filter((path) => path.endsWith('.test.ts') && !runsOnOneEngine(path))
    .map((path) => relative(ROOT, path).split(sep).join('/'))
    .sort();

  it('lists only test files that run on both engines and never reach the module that tells them apart', () => {
    const wrong = ENGINE_FREE_FILES.filter((path) => !testFiles.includes(path) || reachesEngine(join(ROOT, path)));
    expect(wrong).toEqual([]);
  });

  it('lists every such file, so that none runs twice for nothing', () => {
    const free = testFiles.filter((path) => !reachesEngine(join(ROOT, path)));
    expect(free.filter((path) => !ENGINE_FREE_FILES.includes(path))).toEqual([]);
  });

  it('tells a file that uses the database from one that does not', () => {
    expect(reachesEngine(join(TEST, 'wallet', 'ledger.test.ts'))).toBe(true);
    expect(reachesEngine(join(TEST, 'helpers', 'app.ts'))).toBe(true);
    expect(reachesEngine(join(TEST, 'db', 'sql-state.test.ts'))).toBe(false);
  });
});

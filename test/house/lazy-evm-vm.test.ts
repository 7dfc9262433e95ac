import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The sandbox EVM chains' VM (ethereumjs: about 40 MiB and a second of CPU to import here) loads when
 * a process first uses an EVM network, never at start: the server's entry reaches no @ethereumjs
 * package through static imports (type-only imports and `import()` do not count), so the embedded
 * default's start and idle memory stay as they were (docs/evm.md).
 */

const ROOT = join(import.meta.dirname, '..', '..');

/** The modules `file` imports when it is evaluated: value imports and re-exports, not types or import(). */
function staticImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const node of tree.statements) {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause && !clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings)
          ? clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly)
          : false);
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    }
  }
  return found;
}

/** Every package the static import graphs from `entries` reach, with one path to each. */
function packagesReached(entries: string[]): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, path: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
        if (existsSync(target)) walk(target, [...path, target.slice(ROOT.length + 1)]);
      } else if (!packages.has(specifier)) packages.set(specifier, path);
    }
  };
  for (const entry of entries) walk(join(ROOT, entry), [entry]);
  return packages;
}

describe('the sandbox EVM VM loads on first use', () => {
  it('is reached by no static import from what a server start evaluates', () => {
    // main.ts imports the app after its first answer; what a start evaluates is these modules' graphs.
    const reached = packagesReached(['src/main.ts', 'src/app.ts', 'src/services.ts', 'src/workers.ts']);
    const vm = [...reached].filter(([name]) => name.startsWith('@ethereumjs/'));
    expect(vm.map(([name, path]) => `${name} via ${path.join(' → ')}`)).toEqual([]);
    // The walk itself reads the graph: it finds the packages the server does load at start.
    expect(reached.has('fastify')).toBe(true);
  });
});

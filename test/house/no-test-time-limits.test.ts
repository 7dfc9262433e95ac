import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No test, suite or hook sets a time limit of its own (`it(name, fn, 60_000)`, `{ timeout: … }`):
 * a limit there is a verdict on wall time, which a machine busy with other work fails at random.
 * Each phase of vitest.config.ts has one cap that only stops a test that hangs.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const CALLS = new Set(['it', 'test', 'describe', 'beforeAll', 'beforeEach', 'afterAll', 'afterEach']);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `it`, `it.skip`, `describe.skipIf(x)`, `it.each([…])`: the name the call chain starts from. */
function rootName(expression: ts.Expression): string | undefined {
  let node: ts.Expression = expression;
  for (;;) {
    if (ts.isIdentifier(node)) return node.text;
    if (ts.isPropertyAccessExpression(node) || ts.isCallExpression(node)) node = node.expression;
    else return undefined;
  }
}

const isFunction = (node: ts.Node | undefined) =>
  node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));

/** Places in `source` where a test, suite or hook is given a time limit. */
function timeLimitsIn(file: string, source: string): string[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && CALLS.has(rootName(node.expression) ?? '')) {
      const args = node.arguments;
      const last = args[args.length - 1];
      const beforeLast = args[args.length - 2];
      const limitAfterBody = last && ts.isNumericLiteral(last) && isFunction(beforeLast);
      const timeoutOption = args.some(
        (arg) =>
          ts.isObjectLiteralExpression(arg) &&
          arg.properties.some((p) => ts.isPropertyAssignment(p) && p.name.getText(tree) === 'timeout'),
      );
      if (limitAfterBody || timeoutOption) {
        const { line } = tree.getLineAndCharacterOfPosition(node.getStart(tree));
        found.push(`${relative(ROOT, file)}:${line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

describe('tests set no time limits of their own', () => {
  it('finds a limit given after the body and as an option (the check can fail)', () => {
    const source = [
      "it('a', async () => {}, 60_000);",
      "describe.skipIf(x)('b', { timeout: 5 }, () => {});",
      'beforeAll(async () => {}, 1000);',
      "it('c', async () => { await waitUntil(() => true, 5_000); });",
    ].join('\n');
    expect(timeLimitsIn(join(ROOT, 'sample.ts'), source)).toEqual(['sample.ts:1', 'sample.ts:2', 'sample.ts:3']);
  });

  it('none in test/', () => {
    const found = testFiles(join(ROOT, 'test')).flatMap((file) => timeLimitsIn(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });
});

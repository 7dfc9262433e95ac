import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/domain/errors.js';
import { DomainError } from '../../src/domain/errors.js';
import { FACADE_FIELDS } from '../../src/graphql/facade-fields.js';

const PAGE = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'facade.md'), 'utf8');

/** The backticked names in the row of a Markdown table whose first cell is `type`. */
function documentedFields(type: string): string[] {
  const row = PAGE.split('\n').find((line) => line.startsWith(`| \`${type}\``));
  expect(row, `docs/facade.md has a row for ${type}`).toBeDefined();
  const cells = row!.split('|');
  return [...cells[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

describe('docs/facade.md', () => {
  it('lists exactly the fields a facade answers', () => {
    for (const [type, fields] of Object.entries(FACADE_FIELDS)) {
      if (fields.length === 0) continue;
      expect(documentedFields(type).sort(), type).toEqual([...fields].sort());
    }
  });

  it('gives each facade code the status it answers with', () => {
    const codes: ErrorCode[] = [
      'UPSTREAM_UNAVAILABLE',
      'UPSTREAM_TIMEOUT',
      'UPSTREAM_BAD_ANSWER',
      'NOT_IN_FACADE',
      'UPSTREAM_BUDGET_EXCEEDED',
    ];
    for (const code of codes) {
      const row = PAGE.split('\n').find((line) => line.includes(`| \`${code}\``));
      expect(row, code).toBeDefined();
      expect(row!.split('|').at(-2)!.trim(), code).toBe(String(new DomainError(code, '').status));
    }
  });
});

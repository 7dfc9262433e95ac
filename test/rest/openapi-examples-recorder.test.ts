import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const COMMITTED = join(ROOT, 'src/rest/openapi-examples.json');

/**
 * `npm run openapi:examples`, as docs/development.md shows it, records an example of every
 * operation the committed file has: a route added without its example, or an operation that stops
 * answering its success status in the sandbox, fails here (the recorder refuses both), not only when
 * someone next runs it. Written beside the committed file, which the recording does not touch: ids
 * the sandbox draws (virtual account numbers, references) differ between two recordings.
 */
describe('npm run openapi:examples', () => {
  it('records an example of every operation the committed document has', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgw-examples-'));
    try {
      const out = join(dir, 'openapi-examples.json');
      const { stdout, stderr } = await promisify(execFile)('npm', ['run', 'openapi:examples'], {
        cwd: ROOT,
        env: { ...process.env, OPENAPI_EXAMPLES_OUT: out, DATABASE_URL: '', REDIS_URL: '' },
        maxBuffer: 1 << 24,
      });
      expect(`${stdout}${stderr}`).toMatch(/Recorded \d+ operations and \d+ errors/);
      type Examples = { operations: Record<string, unknown>; errors: Record<string, unknown> };
      const recorded = JSON.parse(readFileSync(out, 'utf8')) as Examples;
      const committed = JSON.parse(readFileSync(COMMITTED, 'utf8')) as Examples;
      expect(Object.keys(recorded.operations).length).toBeGreaterThan(90);
      expect(Object.keys(recorded.operations).sort()).toEqual(Object.keys(committed.operations).sort());
      expect(Object.keys(recorded.errors).sort()).toEqual(Object.keys(committed.errors).sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

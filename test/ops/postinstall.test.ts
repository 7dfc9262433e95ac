import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/build.mjs';
import { spawnCommand } from '../helpers/child.js';

/**
 * npm runs the project's postinstall after every `npm install` and `npm ci`: making the embedded
 * database's image is a saving, never a condition of the install.
 */
describe('the postinstall step', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgw-postinstall-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('never fails the install: an image it cannot make is said, and the install goes on', async () => {
    // A checkout with the step but nothing it runs (no node_modules, no image maker).
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(ROOT, 'scripts', 'postinstall.mjs'), join(root, 'scripts', 'postinstall.mjs'));
    const step = spawnCommand(process.execPath, [join(root, 'scripts', 'postinstall.mjs')], {});
    expect(await step.exited).toBe(0);
    expect(step.output()).toMatch(
      /embedded database image not made \(exit \d+\); the first start will run the migrations/,
    );
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Sandbox behaviour lives in sandbox providers, never in a branch of a service on the provider's
 * name: a service that asked `provider.name === 'sandbox'` would run code in production that no
 * sandbox test exercises the way production does.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const DOMAIN = join(ROOT, 'src', 'domain');
const SANDBOX_BRANCH = /\.name\s*[!=]==?\s*['"`]sandbox['"`]|['"`]sandbox['"`]\s*[!=]==?\s*[\w.]*\.name\b/;

const servicesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return servicesUnder(path);
    return entry.name.endsWith('-service.ts') ? [path] : [];
  });

describe('services', () => {
  it("never branch on a provider's name being sandbox", () => {
    const services = servicesUnder(DOMAIN);
    expect(services.length).toBeGreaterThan(5);
    const branches = services.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (SANDBOX_BRANCH.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(branches).toEqual([]);
  });

  it('the pattern finds such a branch', () => {
    expect(SANDBOX_BRANCH.test("if (provider.name === 'sandbox') {")).toBe(true);
    expect(SANDBOX_BRANCH.test("if ('sandbox' !== this.provider.name) {")).toBe(true);
    expect(SANDBOX_BRANCH.test("if (principal.environment === 'sandbox') {")).toBe(false);
  });
});

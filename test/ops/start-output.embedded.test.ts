import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SECRET_LOOKING, sharedSubstrings } from '../config/secret-looking.js';
import { type Child, spawnCommand } from '../helpers/child.js';

/**
 * What the gateway prints when started as an operator starts it (`npm start`, which runs
 * `node scripts/launch.mjs src/main`: the built bundle, built first when stale). One file, in
 * order: both start through dist/, and two builds of it at once would race.
 */
describe('what a start prints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgw-start-output-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const production = {
    NODE_ENV: 'production',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    PGLITE_DATA_DIR: join(dir, 'pglite'),
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: '',
    LOG_LEVEL: 'info',
  };

  /** stdout alone (the helper's output() is stdout and stderr together). */
  const stdoutOf = (child: Child) => {
    let stdout = '';
    child.process.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    return () => stdout;
  };

  it('in production, `npm start --silent` writes only JSON log lines to stdout, start to stop', async () => {
    const child = spawnCommand('npm', ['start', '--silent'], production);
    const stdout = stdoutOf(child);
    try {
      const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 180_000);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    } finally {
      child.process.kill('SIGTERM');
    }
    expect(await child.exited).toBe(0);
    const lines = stdout()
      .split('\n')
      .filter((line) => line !== '');
    expect(lines.some((line) => line.includes('"msg":"ready"'))).toBe(true);
    expect(lines.filter((line) => !line.startsWith('{'))).toEqual([]);
    // The banner for the person at the terminal went to stderr.
    expect(child.output()).toMatch(/Partner Gateway listening on/);
  });

  it('a bad SECRETS_KEY, IDEMPOTENCY_SECRET or SMTP_URL stops the start, naming each, printing none', async () => {
    const bad = {
      SECRETS_KEY: SECRET_LOOKING.SECRETS_KEY,
      IDEMPOTENCY_SECRET: SECRET_LOOKING.IDEMPOTENCY_SECRET,
      SMTP_URL: SECRET_LOOKING.SMTP_URL,
    };
    const child = spawnCommand(process.execPath, ['scripts/launch.mjs', 'src/main'], { ...production, ...bad });
    expect(await child.exited).toBe(1);
    const output = child.output();
    for (const [name, value] of Object.entries(bad)) {
      expect(output).not.toContain(value);
      expect(sharedSubstrings(output, value), name).toEqual([]);
      expect(output).toMatch(new RegExp(`^  ${name}: expected \\S`, 'm'));
    }
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { users } from '../../src/db/schema.js';
import { spawnTs } from '../helpers/child.js';

const SECRETS_KEY = randomBytes(32).toString('base64');

describe('production defaults', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pg-prod-seed-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a production server on an empty database creates no demo user and prints no key', async () => {
    const child = spawnTs('src/main.ts', [], {
      NODE_ENV: 'production',
      SECRETS_KEY,
      PGLITE_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      WORKERS: 'false',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
    });
    try {
      await child.waitFor(/listening on/, 60_000);
    } finally {
      child.process.kill('SIGTERM');
      await child.exited;
    }
    expect(child.output()).not.toMatch(/API key|X-API-KEY|pk_|sk_|demo user|demo account/i);
    // The ready line says so for machines too.
    expect(child.output()).toMatch(/"demoKeyPrinted":false/);
    const database = await openDatabase({ pgliteDataDir: dataDir });
    try {
      expect(await database.db.select().from(users)).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('development keeps the demo seed and local receivers by default; production refuses to turn either on', () => {
    expect(loadConfig({})).toMatchObject({ SEED_DEMO: true, WEBHOOK_LOCAL_RECEIVERS: true });
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY })).toMatchObject({
      SEED_DEMO: false,
      WEBHOOK_LOCAL_RECEIVERS: false,
    });
    expect(() => loadConfig({ NODE_ENV: 'production', SECRETS_KEY, SEED_DEMO: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production', SECRETS_KEY, WEBHOOK_LOCAL_RECEIVERS: 'true' })).toThrow(
      /WEBHOOK_LOCAL_RECEIVERS: may not be on in production/,
    );
  });
});

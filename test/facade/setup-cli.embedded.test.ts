import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { SpecUpstream } from '../fakes/spec-upstream.js';
import { spawnCommand } from '../helpers/child.js';
import { testLogger } from '../helpers/log-file.js';

const PAGE = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'facade.md'), 'utf8');

/** The `npm run [-s] admin -- facade-webhook` lines of docs/facade.md's shell blocks, as a reader would copy them. */
const adminCommands = [...PAGE.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap(([, block]) =>
  block!.split('\n').filter((line) => /^npm run (-s )?admin -- facade-webhook /.test(line)),
);

/**
 * The facade's set-up from the admin CLI, run as docs/facade.md writes it, on an embedded database
 * of its own in front of an upstream written from the spec; a facade on that database then takes
 * the account's deliveries signed with the secret the CLI set.
 */
describe('npm run admin -- facade-webhook, as docs/facade.md writes it', () => {
  let upstream: SpecUpstream;
  let dataDir: string;

  beforeAll(async () => {
    upstream = await new SpecUpstream().start();
    dataDir = mkdtempSync(join(tmpdir(), 'pgw-facade-cli-'));
  });

  afterAll(async () => {
    await upstream?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the inbound URL, then sets the secret and read key; the facade takes the account’s deliveries', async () => {
    expect(adminCommands, 'docs/facade.md shows the commands').toHaveLength(2);
    const { key } = upstream.addUser();
    const secret = `whsec_${randomUUID()}`;
    const env = {
      GATEWAY_MODE: 'facade' as const,
      UPSTREAM_URL: upstream.url,
      UPSTREAM_ENVIRONMENT: 'sandbox' as const,
      PGLITE_DATA_DIR: dataDir,
      UPSTREAM_KEY: key,
      UPSTREAM_WEBHOOK_SECRET: secret,
      UPSTREAM_READ_KEY: key,
    };
    const outputs: string[] = [];
    for (const command of adminCommands) {
      const child = spawnCommand('sh', ['-c', command], env);
      expect(await child.exited, child.output()).toBe(0);
      outputs.push(child.output());
    }
    const [shown, set] = outputs as [string, string];
    const url = shown.match(/Inbound URL \(register it upstream as the account's webhook URL\): (\S+)/)?.[1];
    expect(url, shown).toMatch(/\/webhooks\/upstream\/[0-9a-f-]{36}$/);
    expect(shown).toContain('Webhook secret: not set');
    expect(set).toContain(`Inbound URL (register it upstream as the account's webhook URL): ${url}`);
    expect(set).toMatch(/Webhook secret: set \d{4}-/);
    expect(set).toContain('Gap-filling job: read key set');
    // Quiet (`-s`): npm does not echo the command line, so neither secret nor key is printed.
    expect(set).not.toContain(secret);
    expect(set).not.toContain(key);

    // A facade on the database the CLI wrote: the account's URL takes deliveries signed with that secret.
    const database = await openDatabase({ pgliteDataDir: dataDir });
    try {
      const config = loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', WORKERS: false, ...env });
      const app = await buildApp({
        services: createServices(config, database.db, systemClock, () => undefined),
        logger: testLogger(),
      });
      try {
        const body = JSON.stringify({
          id: `evt_${randomUUID()}`,
          type: 'payout.completed',
          created: Math.floor(Date.now() / 1000),
          data: {},
        });
        const signed = (with_: string) => createHmac('sha256', with_).update(body).digest('hex');
        const inbound = (signature: string) =>
          app.inject({
            method: 'POST',
            url: new URL(url!).pathname,
            headers: { 'content-type': 'application/json', 'x-service-signature': signature },
            payload: body,
          });
        expect((await inbound(signed('another secret'))).statusCode).toBe(401);
        const taken = await inbound(signed(secret));
        expect(taken.statusCode).toBe(200);
        expect(taken.json()).toEqual({ received: true, duplicate: false });
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
    }
  });

  it('refuses a key the upstream does not accept, in one line with exit code 2', async () => {
    const child = spawnCommand('sh', ['-c', adminCommands[0]!], {
      GATEWAY_MODE: 'facade',
      UPSTREAM_URL: upstream.url,
      PGLITE_DATA_DIR: dataDir,
      UPSTREAM_KEY: 'sk_live_not_upstream',
    });
    expect(await child.exited).toBe(2);
    expect(child.output().trim().split('\n').at(-1)).toBe('The upstream does not accept this key.');
  });
});

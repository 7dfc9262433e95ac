import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTs, spawnTs } from '../helpers/child.js';

/**
 * The quick start, as a person runs it: `npm start` on an empty embedded database prints a working
 * sandbox key; the data survives a restart; a second process cannot open the same files; SIGTERM
 * shuts down cleanly; the admin CLI manages keys in the same database.
 */
describe('npm start with the embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgw-start-'));
  const env = { PGLITE_DATA_DIR: join(dir, 'pglite'), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const start = async () => {
    const child = spawnTs('src/main.ts', [], env);
    const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 60_000);
    return { child, url: url! };
  };

  it('prints a ready sandbox key on first start, keeps data across restarts, and refuses a second process', async () => {
    const first = await start();
    // PORT=0: the banner names the port the system chose, not 0, and discovery works at that address.
    const { port } = new URL(first.url);
    expect(first.child.output()).toMatch(new RegExp(`GraphQL: +http://127\\.0\\.0\\.1:${port}/graphql`));
    expect(first.child.output()).not.toMatch(/:0\//);
    const metadata = await fetch(`${first.url}/.well-known/oauth-authorization-server`);
    expect(((await metadata.json()) as { issuer: string }).issuer).toBe(first.url);
    const [, key] = await first.child.waitFor(/API key \(Full Access, shown once\): (pgw_sbx_\S+)/);
    const me = await fetch(`${first.url}/api/v1/user/me`, { headers: { 'X-API-KEY': key! } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { email: string } }).data.email).toBe('demo@partner-gateway.local');

    const second = spawnTs('src/main.ts', [], env);
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(/in use by another process/);

    first.child.process.kill('SIGTERM');
    expect(await first.child.exited).toBe(0);

    const again = await start();
    expect(again.child.output()).not.toMatch(/shown once/);
    expect((await fetch(`${again.url}/api/v1/user/me`, { headers: { 'x-api-key': key! } })).status).toBe(200);
    again.child.process.kill('SIGTERM');
    expect(await again.child.exited).toBe(0);
  });

  it('the admin CLI creates users and keys (JSON output), lists and revokes them', async () => {
    const cli = (...args: string[]) => runTs('scripts/admin.ts', args, env);
    const user = await cli('create-user', '--email', 'ops@example.test', '--first-name', 'Ops', '--json');
    expect(user.code).toBe(0);
    const userId = JSON.parse(user.output).id;
    const created = await cli(
      'create-key',
      '--user',
      'ops@example.test',
      '--name',
      'ci',
      '--env',
      'production',
      '--permission',
      'Transactions',
      '--json',
    );
    const { key, apiKey } = JSON.parse(created.output);
    expect(key).toMatch(/^pgw_live_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toMatchObject({ userId, environment: 'production', permission: 'TRANSACTIONS' });
    const defaulted = JSON.parse((await cli('create-key', '--user', userId, '--name', 'ro', '--json')).output);
    expect(defaulted.apiKey).toMatchObject({ environment: 'sandbox', permission: 'READ_ONLY' });

    const revoked = await cli('revoke-key', '--user', userId, '--key', apiKey.id, '--json');
    expect(JSON.parse(revoked.output).revokedAt).toEqual(expect.any(String));
    const listed = JSON.parse((await cli('list-keys', '--user', userId, '--json')).output);
    expect(listed.map((k: { id: string; revokedAt: string | null }) => [k.id, Boolean(k.revokedAt)])).toContainEqual([
      apiKey.id,
      true,
    ]);
    expect(JSON.stringify(listed)).not.toContain(key);

    const bad = await cli('create-key', '--user', userId, '--name', 'x', '--permission', 'root', '--json');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.output).error).toMatch(/--permission/);
  });
});

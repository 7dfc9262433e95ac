import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domain/events/outbox.js';
import { startTestApp, type StartedTestApp } from '../helpers/app.js';
import { runTs, spawnTs } from '../helpers/child.js';
import { stampEvents } from '../helpers/events.js';
import { Receiver } from '../helpers/receiver.js';

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('CLI papercuts', () => {
  it('npm run admin -- --help prints the usage and exits 0; an unknown option is one line and the usage', async () => {
    const help = await runTs('scripts/admin.ts', ['--help'], {});
    expect(help.code).toBe(0);
    expect(help.output).toMatch(/^Usage: npm run admin -- <command>/);
    for (const command of ['create-user', 'create-key', 'list-keys', 'revoke-key', 'rewrap-wallet-keys'])
      expect(help.output).toContain(command);
    const unknown = await runTs('scripts/admin.ts', ['list-keys', '--frobnicate'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.output.split('\n')[0]).toMatch(/Unknown option '--frobnicate'/);
    expect(unknown.output).not.toMatch(/\n\s+at /);
  });

  it('while a server holds the embedded database, the admin CLI says so in one line, with the dashboard or API route', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pgw-held-'));
    // The lock a running server takes on its data directory.
    const release = await lockfile.lock(dataDir, { stale: 15_000, update: 5_000 });
    try {
      const env = { PGLITE_DATA_DIR: dataDir, PORT: '4123' };
      const keys = await runTs('scripts/admin.ts', ['list-keys', '--user', 'ada@example.com'], env);
      expect(keys.code).toBe(3);
      const lines = keys.output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/is held by a running server/);
      expect(lines[0]).toContain('http://localhost:4123/dashboard/keys');
      expect(lines[0]).toContain('/api/v1/api-keys');
      const user = await runTs('scripts/admin.ts', ['create-user', '--email', 'ada@example.com'], env);
      expect(user.output.trim()).toMatch(/held by a running server.*sign up at http:\/\/localhost:4123\/signup/);
    } finally {
      await release();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('npm run listen', () => {
    let s: StartedTestApp;
    beforeAll(async () => {
      s = await startTestApp({ listen: true });
    });
    afterAll(() => s.t.close());

    it('cannot connect: one line and exit code 1', async () => {
      const port = await closedPort();
      const run = await runTs('scripts/listen.ts', ['--forward-to', 'http://127.0.0.1:9/hooks', '--secret', 'x'], {
        PGW_API_KEY: s.tenant.keys.READ_ONLY,
        PORT: String(port),
      });
      expect(run.code).toBe(1);
      const errors = run.output.split('\n').filter((l) => l.startsWith('Cannot connect'));
      expect(errors).toEqual([expect.stringContaining(`ws://localhost:${port}/graphql`)]);
    });

    it("follows the server's PORT without --url", async () => {
      const port = new URL(s.baseUrl).port;
      const receiver = await new Receiver().start();
      const listener = spawnTs('scripts/listen.ts', ['--forward-to', receiver.url, '--after', '0'], {
        PGW_API_KEY: s.tenant.keys.READ_ONLY,
        PORT: port,
      });
      try {
        await listener.waitFor(new RegExp(`Forwarding events from ws://localhost:${port}/graphql`));
        const event = await recordEvent(
          s.t.services.db,
          { type: 'payout.completed', userId: s.tenant.user.id, environment: 'sandbox', data: { reference: 'PO-P' } },
          new Date(),
        );
        await stampEvents(s.t.services.db, [event.id]);
        s.t.services.doorbell.ring();
        await receiver.waitFor(1);
        expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ id: event.id });
      } finally {
        listener.process.kill('SIGTERM');
        await listener.exited;
        await receiver.stop();
      }
    });
  });
});

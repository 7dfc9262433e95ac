import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGER_PLANS } from '../../src/domain/sandbox/trigger-plans.js';
import { TRIGGERABLE_KINDS } from '../../src/domain/sandbox/trigger-kinds.js';
import { type StartedTestApp, startTestApp } from '../helpers/app.js';
import { spawnCommand, spawnTs } from '../helpers/child.js';
import { stampAll } from '../helpers/events.js';
import { rest } from '../helpers/rest.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SANDBOX_DOC = readFileSync(join(ROOT, 'docs', 'sandbox.md'), 'utf8');

/** The `npm run trigger` lines of the page's shell blocks, as a reader would copy them. */
const triggerCommands = (markdown: string) =>
  [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap(([, block]) =>
    block!.split('\n').filter((line) => line.startsWith('npm run trigger')),
  );

describe('npm run trigger', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({ listen: true });
  });
  afterAll(() => s.t.close());

  it("runs as docs/sandbox.md writes it against a live server, and prints the events' ids", async () => {
    const commands = triggerCommands(SANDBOX_DOC);
    expect(commands.length, 'docs/sandbox.md shows the command').toBeGreaterThan(0);
    for (const command of commands) {
      const child = spawnCommand('sh', ['-c', command], {
        PGW_API_KEY: s.tenant.keys.TRANSACTIONS,
        PUBLIC_URL: s.baseUrl,
      });
      expect(await child.exited, child.output()).toBe(0);
      const [, kind, eventId] = child.output().match(/Triggered (\S+): (\S+)/) ?? [];
      expect(command).toContain(kind);
      // The id printed is the caller's event of that kind, in its feed once stamped.
      await stampAll(s.t.services.db);
      const event = await rest(s.t, s.tenant.keys.READ_ONLY)('GET', `/api/v1/events/${eventId}`);
      expect(event.statusCode, child.output()).toBe(200);
      expect(event.json().data.type).toBe(kind);
      expect(child.output()).toContain(`${eventId}  ←`);
    }
  });

  it('says why a production key is refused, with exit code 1', async () => {
    const child = spawnTs('scripts/trigger.ts', ['payout.failed', '--url', s.baseUrl], {
      PGW_API_KEY: s.tenant.productionKey,
    });
    expect(await child.exited).toBe(1);
    expect(child.output()).toMatch(/^403: Events can be triggered with a sandbox key only/m);
  });

  it("docs/sandbox.md names each kind's operation as the answer describes it", () => {
    const flat = SANDBOX_DOC.replace(/ {2,}/g, ' ');
    for (const kind of TRIGGERABLE_KINDS) expect(flat).toContain(`| \`${kind}\` | ${TRIGGER_PLANS[kind].does} |`);
  });
});

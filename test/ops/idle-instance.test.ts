import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countStatements } from '../../scripts/bench/statement-counter.js';
import { startWorkers, type Workers } from '../../src/workers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

const SETTLE_MS = 20_000;
const WINDOW_MS = 30_000;

/**
 * What an idle instance asks of its database, counted rather than timed (the machine is shared;
 * the CPU an idle instance spends is measured by `npm run bench:idle`, docs/benchmarks.md): an
 * instance started as the server starts one (the app, its readiness check, the test clocks, the
 * workers with their production settings), left alone for 20 s (its first rounds, the schedules it
 * writes at its start), then every statement it sends in the next 30 s, by what sends it.
 *
 * The round trips follow from the loops' waits: readiness every 2 s (0.5 a second); on PGlite the
 * relay (six statements a round there) and the four job lanes at most every 30 s, and no test
 * clock reads (nothing else opens the database); on PostgreSQL, the wake channel listening, the
 * relay and the test clocks every 30 s, the lanes every 5 s (a lease that lapsed with its worker
 * is announced by no one). Before, both read the test clocks every 2 s and PostgreSQL's relay ran
 * every 2 s: about 1.4 and 2.4 statements a second.
 */
describe('an idle instance', () => {
  let t: TestApp;
  let workers: Workers;
  beforeAll(async () => {
    // A database of its own on either engine: its job runner would take other files' due jobs and
    // webhook retries, which are work, not idling.
    t = await createTestApp({ isolated: 'even-on-pglite' });
    await t.services.testClocks.start();
  });
  afterAll(async () => {
    await workers?.stop(1_000);
    await t?.close();
  });

  it('sends its database at most a few statements a second once idle', async () => {
    const { counter, stop } = countStatements((t.services.db as unknown as { $client: unknown }).$client);
    const senders = new Map<string, number>();
    const note = counter.note.bind(counter);
    counter.note = (session, first) => {
      note(session, first);
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
      const sender = text.replace(/\s+/g, ' ').trim().slice(0, 60);
      senders.set(sender, (senders.get(sender) ?? 0) + 1);
    };
    try {
      workers = startWorkers(t.services, t.app.log);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      counter.take();
      senders.clear();
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      const { roundTrips } = counter.take();
      const perSecond = roundTrips / (WINDOW_MS / 1000);
      const bySender = [...senders].sort((a, b) => b[1] - a[1]).map(([text, n]) => `${n} × ${text}`);
      // PGlite: readiness 15, a relay round (6) and the lanes' claims (4 or 5). PostgreSQL:
      // readiness 15, the lanes 24, the relay, the test clocks and the listener's check 1 or 2 each.
      expect(perSecond, bySender.join('\n')).toBeLessThanOrEqual(onPostgres ? 1.6 : 1.0);
    } finally {
      stop();
    }
  });
});

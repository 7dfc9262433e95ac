import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueJob } from '../../src/domain/jobs/job-runner.js';
import { startWorkers } from '../../src/workers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

describe('what the workers log about a failed job', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ isolated: true });
  });
  afterAll(() => t.close());

  it('a statement timeout is a warning naming the job and the code, not hidden as an outage', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const kind = `k-${randomUUID()}`;
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    const workers = startWorkers(t.services, log, [
      {
        kind,
        run: async () => {
          throw new Error('Failed query: select …', { cause: timeout });
        },
      },
    ]);
    try {
      const id = await enqueueJob(t.services.db, { kind, runAt: new Date(), tenant: '' });
      await waitUntil(() => lines.some((line) => line['jobId'] === id), 10_000);
      const line = lines.find((l) => l['jobId'] === id)!;
      expect(line).toMatchObject({ level: 40, msg: 'job failed', kind });
      expect(line['database']).toBe('57014: canceling statement due to statement timeout');
      // Never the query text.
      expect(JSON.stringify(line)).not.toContain('select');
      // The database was not declared down for it.
      expect(t.services.health.databaseState).toBe('up');
    } finally {
      await workers.stop(1_000);
    }
  });
});

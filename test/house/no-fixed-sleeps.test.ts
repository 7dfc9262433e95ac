import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Tests wait on conditions (test/helpers/wait.ts), on signals from the code under test, or on the
 * injected clock; never for a fixed time. A fixed sleep is flaky on a loaded machine and slow on an
 * idle one. The few timers left are listed here, each with the reason it is not a wait for an effect.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const TEST_DIR = join(ROOT, 'test');
// This file names the patterns it looks for.
const SELF = relative(ROOT, import.meta.filename);

/** Calls that pause for a time rather than until something happens. */
const TIMER_PATTERNS: RegExp[] = [
  /\bsetTimeout\s*\(/,
  /\bsetInterval\s*\(/,
  /\b(sleep|delay|pause)\s*\(\s*\d/,
  /['"](node:)?timers\/promises['"]/,
  /\bwaitForTimeout\s*\(/,
];

interface Allowed {
  file: string;
  /** Text that occurs in the allowed line (so the entry follows the line when others move). */
  line: string;
  reason: string;
}

const ALLOWED: Allowed[] = [
  {
    file: 'test/ops/faults.pg.test.ts',
    line: 'await sleep(100);',
    reason: 'paces slow payouts one every 100 ms until the database turns read-only; nothing is awaited but the pace',
  },
  {
    file: 'test/ops/idle-instance.test.ts',
    line: 'setTimeout(resolve, SETTLE_MS)',
    reason: "lets a started instance's start-up work end before the idle window; nothing is awaited but time itself",
  },
  {
    file: 'test/ops/idle-instance.test.ts',
    line: 'setTimeout(resolve, WINDOW_MS)',
    reason: 'the idle window whose database statements are counted: its length is the figure under test',
  },
  {
    file: 'test/wallet/slow-provider.pg.test.ts',
    line: 'const timer = setInterval(() => {',
    reason: "samples the pool's use while a burst runs, the figure under test; nothing waits on it",
  },
  {
    file: 'test/helpers/child.ts',
    line: 'setTimeout(done, 1_000).unref();',
    reason:
      "a cap on waiting for a child's pipes to close after it exited (a grandchild may hold them); the wait is on 'close'",
  },
  {
    file: 'test/observability/log-writer-stuck.fixture.ts',
    line: 'const ticker = setInterval(() => ticks++, 5);',
    reason: 'counts event-loop turns while stdout is unread, the figure under test; nothing waits on it',
  },
  {
    file: 'test/helpers/wait.ts',
    line: 'const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));',
    reason: 'the poll interval of waitUntil and waitUntilUnchanged, between two looks at a condition',
  },
  {
    file: 'test/helpers/child.ts',
    line: 'const timer = setTimeout(',
    reason: "the hang cap of Child.waitFor; the wait itself is on the process's output, chunk by chunk",
  },
  {
    file: 'test/ops/pool-separation.pg.test.ts',
    line: 'fallback = setTimeout(() => void release(), HOLD_AT_MOST_MS);',
    reason:
      'ends the hold when the transfer is stuck behind it (the failure under test); a passing run releases on the answer',
  },
  {
    file: 'test/jobs/job-claims.pg.test.ts',
    line: 'await new Promise((r) => setTimeout(r, Math.random() * 3));',
    reason: "random jitter (0–3 ms) in the handler so three workers' claims interleave; nothing waits on it",
  },
  {
    file: 'test/events/outbox-order.pg.test.ts',
    line: 'await new Promise((r) => setTimeout(r, Math.random() * 8));',
    reason: 'random hold (0–8 ms) inside each writer transaction so commits land out of insert order',
  },
  {
    file: 'test/events/outbox-order.pg.test.ts',
    line: 'await new Promise((r) => setTimeout(r, 2));',
    reason: 'pacing of the two racing relay loops while the writers run, so they do not spin on the lock',
  },
  {
    file: 'test/helpers/throwaway-servers.ts',
    line: 'const timer = setTimeout(() => reject(new Error(`redis-server did not start:',
    reason: 'the deadline for a throwaway redis-server to start; the wait itself is on its "Ready" line',
  },
  {
    file: 'test/ops/fault-harness.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 50));',
    reason: 'the probe interval of timeUntilServing, which measures recovery by trying a transfer until one succeeds',
  },
  {
    file: 'test/ops/fault-harness.ts',
    line: 'if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));',
    reason: 'back-off between rounds of client retries (a partner retrying), not a wait for an effect',
  },
  {
    file: 'test/ops/faults.pg.test.ts',
    line: 'const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));',
    reason:
      'shapes the faults themselves (how long a dependency stays away, spacing of terminations); no assertion waits on it',
  },
  {
    file: 'test/ops/faults.pg.test.ts',
    line: 'await sleep(150);',
    reason: "spacing of three backend terminations during the burst: the fault's shape",
  },
  {
    file: 'test/ops/faults.pg.test.ts',
    line: 'await sleep(500);',
    reason: 'keeps PostgreSQL stopped for half a second more after readiness saw it, so requests meet the outage',
  },
  {
    file: 'test/ops/faults.pg.test.ts',
    line: "ws.on('connected', () => setTimeout(resolve, 300));",
    reason:
      'graphql-ws gives no acknowledgement that a subscription is live; the test compares counts from before the fault, so an early event missed cannot pass it wrongly',
  },
  {
    file: 'test/ops/shutdown.pg.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 500));',
    reason:
      'graphql-ws gives no acknowledgement that a subscription is live; the assertion is on its 1001 close, which a late start cannot fake',
  },
  {
    file: 'test/ops/shutdown.pg.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 100));',
    reason: 'the probe period of the simulated load balancer polling /readyz',
  },
  {
    file: 'test/protection/explorer.browser.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 1000));',
    reason:
      'GraphiQL re-parses an edited document after a debounce with no event to wait on; a too-short wait fails the test, never passes it wrongly',
  },
  {
    file: 'test/protection/explorer.browser.test.ts',
    line: 'await new Promise((resolve) => setTimeout(resolve, 1500));',
    reason:
      'the subscription starts from now with no signal that it is live in the page; a too-short wait fails the test, never passes it wrongly',
  },
  {
    file: 'test/jobs/fairness.test.ts',
    line: "if (job.tenant === 'slow-tenant') await new Promise((r) => setTimeout(r, 3_000));",
    reason: 'a slow job that holds its slot: the work being scheduled, not a wait for it',
  },
  {
    file: 'test/jobs/lease-expiry.test.ts',
    line: 'await new Promise((r) => setTimeout(r, 3_000));',
    reason: 'a job that runs three lease lengths, so only the heartbeat can keep its lease: the work under test',
  },
  {
    file: 'test/jobs/starvation.pg.test.ts',
    line: 'await new Promise((r) => setTimeout(r, 10));',
    reason: 'the 10 ms sampling interval of a latency measurement (settle and webhook times), bounded by its deadline',
  },
];

interface Finding {
  file: string;
  lineNumber: number;
  text: string;
}

/** Lines of `source` that start a timer. */
function findTimers(file: string, source: string): Finding[] {
  return source
    .split('\n')
    .flatMap((text, index) =>
      TIMER_PATTERNS.some((pattern) => pattern.test(text)) ? [{ file, lineNumber: index + 1, text: text.trim() }] : [],
    );
}

function testSources(): Array<{ file: string; source: string }> {
  return readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => relative(ROOT, join(TEST_DIR, path)).split('\\').join('/'))
    .filter((file) => file !== SELF)
    .map((file) => ({ file, source: readFileSync(join(ROOT, file), 'utf8') }));
}

const isAllowed = (finding: Finding) =>
  ALLOWED.some((entry) => entry.file === finding.file && finding.text.includes(entry.line));

describe('tests wait on conditions, not fixed times', () => {
  const findings = testSources().flatMap(({ file, source }) => findTimers(file, source));

  it('no test or helper starts a timer outside the allow-list', () => {
    const unlisted = findings.filter((finding) => !isAllowed(finding));
    expect(
      unlisted.map((f) => `${f.file}:${f.lineNumber}: ${f.text}`),
      'wait with waitUntil (test/helpers/wait.ts), a signal, or the injected clock instead; ' +
        'or list the line in ALLOWED with why it is not a wait for a side effect',
    ).toEqual([]);
  });

  it('every allow-list entry still matches a line and says why', () => {
    const stale = ALLOWED.filter(
      (entry) => !findings.some((finding) => finding.file === entry.file && finding.text.includes(entry.line)),
    );
    expect(stale).toEqual([]);
    for (const entry of ALLOWED) expect(entry.reason.length).toBeGreaterThan(20);
  });

  it('finds the shapes of a fixed sleep', () => {
    const samples = [
      'await new Promise((r) => setTimeout(r, 300));',
      'await new Promise((resolve) => setTimeout(resolve, 1500));',
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'await sleep(200);',
      'await delay(100);',
      'const poll = setInterval(check, 50);',
      'await page.waitForTimeout(500);',
    ];
    for (const sample of samples) expect(findTimers('x.ts', sample), sample).toHaveLength(1);
    expect(findTimers('x.ts', 'await waitUntil(() => done, { timeoutMs: 5000 });')).toEqual([]);
    expect(findTimers('x.ts', 'clock.set(new Date(previous + delay - 1));')).toEqual([]);
  });
});

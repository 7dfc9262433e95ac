/**
 * Waiting in tests: on a condition, never for a fixed time. A fixed sleep is either too short on a
 * loaded machine (a flaky failure) or longer than needed everywhere else (a slow suite).
 */

export interface WaitOptions {
  /**
   * Give up (and fail, naming the condition) after this long, but never sooner than
   * HUNG_AFTER_MS: a condition that holds late on a loaded machine is slow, not wrong, so the
   * deadline only stops a wait on something that will never happen.
   */
  timeoutMs?: number;
  /** How often to look again. */
  intervalMs?: number;
}

/** The shortest a wait lasts before it fails: long enough that only a hang reaches it, even beside a CPU hog on both cores. */
const HUNG_AFTER_MS = 120_000;
const DEFAULT_INTERVAL_MS = 20;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function optionsOf(options: WaitOptions | number): Required<WaitOptions> {
  const given = typeof options === 'number' ? { timeoutMs: options } : options;
  return {
    timeoutMs: Math.max(given.timeoutMs ?? 0, HUNG_AFTER_MS),
    intervalMs: given.intervalMs ?? DEFAULT_INTERVAL_MS,
  };
}

/**
 * Polls `condition` until it holds, or fails naming it after `timeoutMs` (a bare number is the
 * timeout). A condition that throws ends the wait with its error.
 */
export async function waitUntil(
  condition: () => Promise<boolean> | boolean,
  options: WaitOptions | number = {},
): Promise<void> {
  const { timeoutMs, intervalMs } = optionsOf(options);
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${condition.toString()}`);
    await pause(intervalMs);
  }
}

/**
 * Resolves with `read()` once it has not changed for `quietMs`, or fails after `timeoutMs`.
 * For what can only be seen by its absence (a producer that must stop): the quiet window is the
 * claim under test, so it is a deliberate bounded wait, not a guess at how long work takes.
 */
export async function waitUntilUnchanged<T>(read: () => T, options: WaitOptions & { quietMs: number }): Promise<T> {
  const { timeoutMs, intervalMs } = optionsOf(options);
  const deadline = Date.now() + timeoutMs;
  let value = read();
  let unchangedSince = Date.now();
  while (Date.now() - unchangedSince < options.quietMs) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms: the value kept changing (last ${String(value)})`);
    await pause(intervalMs);
    const now = read();
    if (!Object.is(now, value)) {
      value = now;
      unchangedSince = Date.now();
    }
  }
  return value;
}

/** A promise and the function that settles it: a signal from inside the code under test. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

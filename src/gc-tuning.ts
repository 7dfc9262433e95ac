import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept before it
 * starts the next one, in percent (`--heap-growing-percent`; 0 leaves V8's own factor).
 *
 * V8 picks that factor from how cheap its collections have been: this gateway's are cheap, so it
 * settles near 1.1 and, at a steady 500–600 transfers a second, marked the whole heap every 3.5 s
 * to free about a tenth of it. Marking runs on helper threads and in steps on the event loop; on a
 * machine with few cores it takes the event loop's core for 60–80 ms, requests queue behind it,
 * and each collection left a run of 50–150 answers slower than 50 ms (docs/benchmarks.md, "The
 * half-peak tail"). At 100 % (a factor of 2) it marked about every 30 s there, for about 70 MB
 * more heap; the extra grows with the live heap (up to as much again).
 *
 * Set before the server starts serving. V8 reads this flag each time it computes the next limit,
 * so setting it at run time takes effect from the next collection on.
 */
export function tuneGarbageCollector(
  heapGrowingPercent: number,
  setFlags: (flags: string) => void = setFlagsFromString,
  execArgv: readonly string[] = process.execArgv,
): void {
  // A factor given on node's own command line is the operator's choice: left as it is.
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  if (heapGrowingPercent > 0) setFlags(`--heap-growing-percent=${Math.trunc(heapGrowingPercent)}`);
}

/**
 * The young generation's size, on node's command line (`npm start`, the image's CMD, the money
 * bench's gateway): V8 sizes it when the process starts, so it cannot be set from here.
 *
 * A request's objects die young, but with V8's default semi-space (16 MB) those still alive at
 * two scavenges in a row (a transfer waiting on its commit, a burst's queued requests) were
 * promoted, filling the old generation and bringing full collections with them. At 32 MB none of
 * the money bench's six P2P half-peak rounds (two runs) had a full collection, against two of six
 * at the default, at the same throughput and CPU per request, for at most 32 MB more memory
 * (docs/benchmarks.md, "The young generation").
 *
 * It also starts at 16 MB rather than growing from 1 MB: loading the server's modules keeps most of
 * what it allocates, and a small young generation copied it out in about 18 scavenges before the
 * first answer, against 6 from 16 MB, about half the start's collection pauses (docs/benchmarks.md,
 * "Footprint and start").
 */
export const YOUNG_GENERATION_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=32'] as const;

/** The same flags as a shell command line writes them. */
export const YOUNG_GENERATION_ARGS = YOUNG_GENERATION_FLAGS.join(' ');

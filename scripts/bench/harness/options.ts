import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { RoundOptions } from './rounds.js';

/**
 * The round flags every interleaved bench takes: `--warmup 5 --round 10 --rounds 3`. Rounds shorter
 * than 10 s are allowed for development and flagged in the output as not for publishing.
 */
export const roundFlags = {
  warmup: { type: 'string', default: '5' },
  round: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '3' },
} as const;

export function roundOptions(values: { warmup?: string; round?: string; rounds?: string }): RoundOptions & {
  note: string;
} {
  const options = {
    warmupSeconds: Number(values.warmup ?? 5),
    roundSeconds: Number(values.round ?? 10),
    rounds: Number(values.rounds ?? 3),
  };
  const note =
    `warm-up ${options.warmupSeconds} s per target, ${options.rounds} interleaved rounds of ${options.roundSeconds} s, medians` +
    (options.roundSeconds < 10 ? ' (rounds under 10 s: development figures, not for publishing)' : '');
  return { ...options, note };
}

/**
 * `parseArgs` for a bench's command line (strict: an unknown flag is an error). With
 * BENCH_CHECK_ARGS=1 the bench stops once its flags are read, having measured nothing: that is how
 * test/docs/bench-commands.test.ts runs every bench command the docs show, as written, in seconds.
 */
export function benchArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const parsed = parseArgs(config);
  if (process.env.BENCH_CHECK_ARGS === '1') {
    process.stdout.write('bench arguments ok\n');
    process.exit(0);
  }
  return parsed;
}

import { appendFileSync } from 'node:fs';

/**
 * Fuzz settings: a fixed seed in CI (reproducible), a fresh one locally (new inputs every run),
 * either overridden by FUZZ_SEED; FUZZ_RUNS is the number of generated requests per operation.
 * The seed is printed, so any local failure can be replayed with FUZZ_SEED=<seed>.
 */
export const FUZZ_SEED = process.env.FUZZ_SEED
  ? Number(process.env.FUZZ_SEED)
  : process.env.CI
    ? 20261124
    : Math.floor(Math.random() * 2 ** 31);

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 20);

/** Limits the fuzzed app runs with: rate limits out of the way, the REST body limit small and known. */
export const FUZZ_CONFIG = {
  RATE_LIMIT_PER_MINUTE: 100_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 100_000_000,
  REST_BODY_LIMIT_BYTES: 65_536,
};

/** Per-file timeout: the CI run stays well under three minutes per database. */
export const FUZZ_TIMEOUT_MS = Number(process.env.FUZZ_TIMEOUT_MS ?? 170_000);

/** Long runs: FUZZ_PROGRESS=<file> gets a line per operation, so a run can be watched while it goes. */
export function progress(line: string): void {
  if (process.env.FUZZ_PROGRESS) appendFileSync(process.env.FUZZ_PROGRESS, `${new Date().toISOString()} ${line}\n`);
}

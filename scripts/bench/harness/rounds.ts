import autocannon from 'autocannon';
import { cpuMicros, rssMiB } from './proc.js';

/** What one round of load against one target produced. */
export interface RoundLoad {
  requests: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  /** Transport errors plus answers that were not 2xx. */
  errors: number;
}

/** One thing to measure: a server process (whose CPU is counted) and how to drive it for `seconds`. */
export interface Target {
  name: string;
  /** The process serving the target: its CPU time per request is the figure that survives a loaded machine. */
  pid: number;
  drive(seconds: number): Promise<RoundLoad>;
  /** Name of the target this one is compared with in the ratio column. */
  peer?: string;
}

export interface Measured {
  name: string;
  peer?: string;
  cpuMicrosPerRequest: number;
  rps: number;
  p50: number;
  p99: number;
  rssMiB: number;
  /** Summed over every round. */
  errors: number;
  rounds: number;
}

export interface RoundOptions {
  /** Seconds of unmeasured load per target before the first round (JIT, caches, Apollo's first requests). */
  warmupSeconds: number;
  /** Seconds per target per round; at least 10 so a round outlasts GC cycles and scheduler noise. */
  roundSeconds: number;
  /** At least 3: the median of each figure is reported. */
  rounds: number;
  /** Seconds of no load over which each server's idle CPU is measured (default 3), then subtracted. */
  idleSeconds?: number;
  log?: (line: string) => void;
}

/** An HTTP target driven by autocannon from this process (which the harness keeps on CPU 1). */
export function httpTarget(options: {
  name: string;
  pid: number;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  peer?: string;
}): Target {
  return {
    name: options.name,
    pid: options.pid,
    ...(options.peer ? { peer: options.peer } : {}),
    async drive(seconds) {
      const result = await autocannon({
        url: options.url,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        ...(options.body ? { body: options.body } : {}),
        connections: options.connections ?? 32,
        duration: seconds,
      });
      return {
        requests: result.requests.total,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.non2xx + result.timeouts,
      };
    },
  };
}

/**
 * Warms every target up, then runs `rounds` rounds in which every target gets `roundSeconds` of load
 * in turn, the order rotated each round so no target always runs first or last (the machine's
 * background load drifts). Each figure is the median over rounds, taken per figure.
 */
export async function measureInterleaved(targets: Target[], options: RoundOptions): Promise<Measured[]> {
  const log = options.log ?? console.log;
  if (options.rounds < 3) throw new Error('at least 3 rounds: the figures are medians');
  // What each server burns with no load (timers, pollers, GC): at low throughput on a busy machine
  // it would otherwise be charged to the few requests served, so it is measured and taken off.
  const idle = new Map<number, number>();
  const pids = [...new Set(targets.map((t) => t.pid))];
  const idleFrom = new Map(pids.map((pid) => [pid, cpuMicros(pid)]));
  const idleStarted = performance.now();
  await new Promise((resolve) => setTimeout(resolve, (options.idleSeconds ?? 3) * 1000));
  const idleSeconds = (performance.now() - idleStarted) / 1000;
  for (const pid of pids) idle.set(pid, (cpuMicros(pid) - idleFrom.get(pid)!) / idleSeconds);
  log(`idle CPU, µs per second: ${pids.map((pid) => Math.round(idle.get(pid)!)).join(', ')}`);
  for (const target of targets) {
    log(`warm-up ${options.warmupSeconds}s: ${target.name}`);
    await target.drive(options.warmupSeconds);
  }
  const samples = new Map<string, Array<Omit<Measured, 'name' | 'errors' | 'rounds' | 'peer'> & { errors: number }>>(
    targets.map((t) => [t.name, []]),
  );
  for (let round = 0; round < options.rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
    for (const target of order) {
      const before = cpuMicros(target.pid);
      const started = performance.now();
      const load = await target.drive(options.roundSeconds);
      const elapsed = (performance.now() - started) / 1000;
      const used = Math.max(0, cpuMicros(target.pid) - before - idle.get(target.pid)! * elapsed);
      const sample = {
        cpuMicrosPerRequest: used / Math.max(1, load.requests),
        rps: load.requests / options.roundSeconds,
        p50: load.p50,
        p99: load.p99,
        rssMiB: rssMiB(target.pid),
        errors: load.errors,
      };
      samples.get(target.name)!.push(sample);
      log(
        `round ${round + 1}/${options.rounds} ${target.name}: ${Math.round(sample.cpuMicrosPerRequest)} µs CPU/req, ` +
          `${Math.round(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, errors ${sample.errors}`,
      );
    }
  }
  return targets.map((target) => {
    const rows = samples.get(target.name)!;
    const pick = (f: (r: (typeof rows)[number]) => number) => median(rows.map(f));
    return {
      name: target.name,
      ...(target.peer ? { peer: target.peer } : {}),
      cpuMicrosPerRequest: Math.round(pick((r) => r.cpuMicrosPerRequest)),
      rps: Math.round(pick((r) => r.rps)),
      p50: pick((r) => r.p50),
      p99: pick((r) => r.p99),
      rssMiB: pick((r) => r.rssMiB),
      errors: rows.reduce((sum, r) => sum + r.errors, 0),
      rounds: rows.length,
    };
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The p-th percentile (0–100) of a list of numbers, nearest rank. */
/** The largest value; a loop, because spreading a run's worth of samples into Math.max overflows the stack. */
export function maximum(values: number[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const value of values) if (value > max) max = value;
  return values.length === 0 ? Number.NaN : max;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

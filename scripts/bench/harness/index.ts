/**
 * The bench harness every `npm run bench*` script shares: servers pinned to CPU 0 and load from
 * CPU 1 (taskset), warm-up, interleaved rounds of at least 10 s, medians of at least 3 rounds,
 * server CPU µs per request from /proc beside req/s and p50/p99, and the machine context line.
 */
export { canPin, onLoadCore, spawnServer } from './pinning.js';
export { cpuMicros, loadAverage, peakRssMiB, rssMiB } from './proc.js';
export { machineBusyMicros, postgresCpu, postgresCpuBetween } from './cpu-shares.js';
export { machineLine, resultTable } from './report.js';
export {
  httpTarget,
  type Measured,
  maximum,
  measureInterleaved,
  median,
  percentile,
  type RoundLoad,
  type RoundOptions,
  type Target,
} from './rounds.js';
export { compiledServer, type Started, startServer } from './server.js';
export { roundFlags, roundOptions } from './options.js';
export { type PacedLoad, type PacedRequest, pacedLoad } from './paced.js';
export { type ClosedLoad, type ClosedRequest, closedLoad } from './closed.js';

import { cpus } from 'node:os';
import type { Measured } from './rounds.js';
import { canPin } from './pinning.js';
import { loadAverage } from './proc.js';

/** Machine, date, Node and load average: the context every published figure carries. */
export function machineLine(): string {
  return (
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus()[0]?.model ?? 'unknown CPU'} ` +
    `(${cpus().length} cores), Node ${process.version}, load average ${loadAverage()}; ` +
    (canPin ? 'server on CPU 0, load generator on CPU 1' : 'no taskset: server and load share CPUs')
  );
}

/**
 * The result table: CPU µs per request first (the figure that holds on a loaded machine), then
 * throughput and latency, and the CPU ratio to the target named as its peer.
 */
export function resultTable(results: Measured[]): string {
  const byName = new Map(results.map((r) => [r.name, r]));
  const rows = results.map((r) => {
    const peer = r.peer ? byName.get(r.peer) : undefined;
    const ratio = peer ? `${(r.cpuMicrosPerRequest / peer.cpuMicrosPerRequest).toFixed(2)}×` : '';
    return `| ${r.name} | ${r.cpuMicrosPerRequest} | ${r.rps} | ${r.p50} | ${r.p99} | ${ratio} | ${peer?.name ?? ''} | ${r.errors} |`;
  });
  return [
    '| target | CPU µs/req | req/s | p50 ms | p99 ms | CPU ratio | to peer | errors |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

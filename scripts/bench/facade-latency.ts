import { median, type PacedRequest, pacedLoad } from './harness/index.js';

/** One request asked of the upstream directly and through the facade, the same bytes both ways. */
export interface LatencyPair {
  name: string;
  request: PacedRequest;
}

/**
 * What a facade adds to a request's latency over calling its upstream directly: each pair's request
 * at a steady `rate` (pacedLoad: an open loop, so queueing counts), to the upstream and through the
 * facade in turn, the order swapped every round, `rounds` times; medians of each round's p50 and
 * p99. Unlike the throughput rounds, neither process is saturated: the figure is the hop's own
 * time (the facade's work, its connection to the upstream and the upstream's answer relayed).
 */
export async function addedLatency(
  pairs: LatencyPair[],
  options: { directUrl: string; facadeUrl: string; rate: number; seconds: number; rounds: number },
): Promise<string[]> {
  const lines: string[] = [];
  for (const { name, request } of pairs) {
    const direct: Array<{ p50: number; p99: number }> = [];
    const through: Array<{ p50: number; p99: number }> = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? ['direct', 'through'] : ['through', 'direct'];
      for (const which of order) {
        const load = await pacedLoad({
          url: which === 'direct' ? options.directUrl : options.facadeUrl,
          rate: options.rate,
          seconds: options.seconds,
          request: () => request,
        });
        if (load.errors > 0) throw new Error(`${name} (${which}): ${load.errors} errors of ${load.requests}`);
        (which === 'direct' ? direct : through).push({ p50: load.p50, p99: load.p99 });
      }
    }
    const at = (runs: typeof direct, key: 'p50' | 'p99') => median(runs.map((r) => r[key]));
    const added = (key: 'p50' | 'p99') => {
      const ms = at(through, key) - at(direct, key);
      // Below the noise of a loaded machine the difference may come out negative: shown as measured.
      return `${ms < 0 ? '−' : '+'}${Math.abs(ms).toFixed(1)}`;
    };
    lines.push(
      `- ${name}, added latency at ${options.rate} req/s: p50 **${added('p50')} ms** (${at(through, 'p50')} through the facade, ${at(direct, 'p50')} direct), p99 ${added('p99')} ms (${at(through, 'p99')}, ${at(direct, 'p99')})`,
    );
  }
  return lines;
}

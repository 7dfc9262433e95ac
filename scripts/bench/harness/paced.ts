import http from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { percentile } from './rounds.js';

export interface PacedRequest {
  path: string;
  method?: string;
  headers: Record<string, string>;
  body?: string;
  /** Called once the request is answered or has failed (to give back what it held, e.g. a wallet). */
  onAnswered?: () => void;
}

export interface PacedLoad {
  /** Requests answered (any status). */
  requests: number;
  ok: number;
  /** Milliseconds from each request's scheduled start to its answer. */
  p50: number;
  p99: number;
  errors: number;
  /** Each answer's due moment (ms from the round's start) and its latency, in the order answered. */
  answers: Array<{ dueMs: number; latencyMs: number }>;
  /** The load generator's own longest event-loop stall and GC pause in the round (a late start counts as latency). */
  loadStallMs: number;
  loadGcMs: number;
  /** performance.now() at the round's start, the origin of `dueMs`. */
  startedAt: number;
}

/**
 * Latency at a given rate: an open-loop load that starts one request every `1000 / rate` ms, evenly
 * spaced, on as many keep-alive connections as are busy, and times each answer from the moment the
 * request was due (so a stall of the load generator, or queueing, still counts).
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota per second, which the
 * connection spends back to back from the start of every second and then idles, so "half the peak
 * rate" is full concurrency, all connections starting together, for half of each second (a longer
 * tail than steady full load); and it records every answer with
 * `recordValueWithExpectedInterval(latency, ceil(1 / perConnectionRate))` = 1 ms, which adds a
 * synthetic sample at every millisecond below each latency (a lower p50). Neither describes a
 * partner sending requests at that rate.
 */
export async function pacedLoad(options: {
  url: string;
  rate: number;
  seconds: number;
  request: () => PacedRequest;
  /** Most requests in flight at once (further starts wait and count their wait). */
  maxSockets?: number;
}): Promise<PacedLoad> {
  const target = new URL(options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 });
  const latencies: number[] = [];
  const answers: Array<{ dueMs: number; latencyMs: number }> = [];
  let ok = 0;
  let errors = 0;
  const inflight: Array<Promise<void>> = [];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let loadGcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) loadGcMs = Math.max(loadGcMs, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  const start = performance.now();
  const total = Math.max(1, Math.round(options.seconds * options.rate));
  try {
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / options.rate;
      const wait = due - performance.now();
      if (wait > 0.5) await new Promise((resolve) => setTimeout(resolve, wait));
      const next = options.request();
      inflight.push(
        new Promise<void>((resolve) => {
          const req = http.request(
            {
              host: target.hostname,
              port: target.port,
              method: next.method ?? 'POST',
              path: next.path,
              headers: next.headers,
              agent,
            },
            (res) => {
              res.resume();
              res.on('end', () => {
                const latency = performance.now() - due;
                latencies.push(latency);
                answers.push({ dueMs: due - start, latencyMs: latency });
                if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) ok++;
                else errors++;
                next.onAnswered?.();
                resolve();
              });
            },
          );
          req.on('error', () => {
            errors++;
            next.onAnswered?.();
            resolve();
          });
          req.end(next.body);
        }),
      );
    }
    await Promise.all(inflight);
  } finally {
    agent.destroy();
    loop.disable();
    gc.disconnect();
  }
  return {
    requests: latencies.length,
    ok,
    p50: Math.round(percentile(latencies, 50) * 10) / 10,
    p99: Math.round(percentile(latencies, 99) * 10) / 10,
    errors,
    answers,
    loadStallMs: Math.round(loop.max / 1e6),
    loadGcMs: Math.round(loadGcMs),
    startedAt: start,
  };
}

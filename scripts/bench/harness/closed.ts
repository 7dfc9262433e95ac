import http from 'node:http';
import { percentile } from './rounds.js';

export interface ClosedRequest {
  path: string;
  method?: string;
  headers: Record<string, string>;
  body?: string;
}

export interface ClosedLoad {
  /** Timed requests answered (any status) plus preparations that failed, by the deadline. */
  requests: number;
  /** Timed requests whose answer `counts` accepted. */
  ok: number;
  /** Milliseconds, of the counted answers. */
  p50: number;
  p99: number;
  /** Answers not counted, transport errors, and preparations that failed. */
  errors: number;
}

/**
 * A closed loop whose requests need something first (an EVM swap its quote), which autocannon
 * cannot do (its requests are built synchronously): each of `connections` workers, until the
 * deadline, awaits `prepare(slot)` (untimed: the quote, asked for just before), then sends the
 * request it gives on its own keep-alive connection and times that alone, one at a time. An answer
 * counts when `counts` accepts its status and body; the rate is counted answers per second, each
 * worker's turn being its preparation plus its request. An answer that comes after the deadline is
 * waited for (the next round starts on a quiet server) but not counted, as autocannon counts
 * nothing still in flight when its duration ends.
 */
export async function closedLoad(options: {
  url: string;
  connections: number;
  seconds: number;
  prepare: (slot: number) => Promise<ClosedRequest>;
  counts: (status: number, body: string) => boolean;
}): Promise<ClosedLoad> {
  const target = new URL(options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  let errors = 0;
  const send = (next: ClosedRequest) =>
    new Promise<{ status: number; body: string } | undefined>((resolve) => {
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
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', () => resolve(undefined));
        },
      );
      req.on('error', () => resolve(undefined));
      req.end(next.body);
    });
  const deadline = performance.now() + options.seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: options.connections }, async (_, slot) => {
        while (performance.now() < deadline) {
          let next: ClosedRequest;
          try {
            next = await options.prepare(slot);
          } catch {
            if (performance.now() < deadline) errors++;
            continue;
          }
          const begun = performance.now();
          const answer = await send(next);
          const answered = performance.now();
          if (answered > deadline) break;
          if (answer && options.counts(answer.status, answer.body)) latencies.push(answered - begun);
          else errors++;
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  const at = (p: number) => (latencies.length ? Math.round(percentile(latencies, p) * 10) / 10 : 0);
  return { requests: latencies.length + errors, ok: latencies.length, p50: at(50), p99: at(99), errors };
}

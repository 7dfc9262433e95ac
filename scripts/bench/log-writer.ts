/**
 * npm run bench:log-writer [-- --lines 400000 --rounds 3]
 *
 * CPU per request log line of the gateway's stdout writer (log-writer.ts: 16 KiB batches written
 * synchronously) against pino's own asynchronous writer (SonicBoom) batching the same 16 KiB. Each
 * round runs one child process per writer, pinned to CPU 0 when it can be, logging the gateway's
 * request line to a pipe this process drains on CPU 1; the children alternate, and the figure is
 * the median of the rounds, from the child's own process.cpuUsage (user + system).
 */
import { benchArgs } from './harness/options.js';
import { spawn } from 'node:child_process';
import pino from 'pino';
import { canPin } from './harness/pinning.js';
import { batchedStdout } from '../../src/observability/log-writer.js';

const WRITERS = ['gateway (log-writer.ts)', 'pino asynchronous (SonicBoom, minLength 16 KiB)'] as const;

async function child(writer: string, lines: number): Promise<void> {
  const destination =
    writer === WRITERS[0]
      ? batchedStdout()
      : pino.destination({ dest: 1, sync: false, minLength: 16_384, maxWrite: 65_536 });
  const log = pino({ level: 'info' }, destination);
  const started = process.cpuUsage();
  let n = 0;
  // In turns of 50 lines, as requests arrive, so the writer's timers and callbacks run between them.
  await new Promise<void>((resolve) => {
    const turn = () => {
      for (let i = 0; i < 50; i++, n++)
        log.info(
          {
            reqId: `req-${n}`,
            credentialId: 'b3c1f0e2-1111-2222-3333-444455556666',
            method: 'GET',
            route: '/api/v1/user/me',
            statusCode: 200,
            durationMs: 1.2,
          },
          'request completed',
        );
      if (n < lines) setImmediate(turn);
      else resolve();
    };
    turn();
  });
  const used = process.cpuUsage(started);
  process.stderr.write(`${JSON.stringify({ cpuMicrosPerLine: (used.user + used.system) / lines })}\n`);
  process.exit(0);
}

function run(writer: string, lines: number): Promise<number> {
  const self = [process.execPath, '--import', 'tsx', process.argv[1]!, '--child', writer, '--lines', String(lines)];
  const [command, ...args] = canPin ? ['taskset', '-c', '0', ...self] : self;
  const proc = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.resume();
  let report = '';
  proc.stderr.on('data', (chunk: Buffer) => {
    report += chunk.toString();
  });
  return new Promise((resolve, reject) =>
    proc.on('close', (code) => {
      const line = report.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`${writer} exited ${code}: ${report}`));
      else resolve((JSON.parse(line) as { cpuMicrosPerLine: number }).cpuMicrosPerLine);
    }),
  );
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const { values } = benchArgs({
  options: {
    child: { type: 'string' },
    lines: { type: 'string', default: '400000' },
    rounds: { type: 'string', default: '3' },
  },
});
const lines = Number(values.lines);
if (values.child) await child(values.child, lines);
else {
  const results = new Map<string, number[]>(WRITERS.map((w) => [w, []]));
  for (let round = 0; round < Number(values.rounds); round++)
    for (const writer of WRITERS) results.get(writer)!.push(await run(writer, lines));
  console.log(
    `${lines} request lines per child, ${values.rounds} interleaved rounds, medians${canPin ? ', child on CPU 0' : ''}`,
  );
  for (const [writer, cpu] of results)
    console.log(
      `${writer}: ${median(cpu).toFixed(2)} µs CPU per line (rounds: ${cpu.map((c) => c.toFixed(2)).join(', ')})`,
    );
}

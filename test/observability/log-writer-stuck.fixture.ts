/**
 * Logs 96 MiB through the gateway's stdout writer to a reader that does not read, then reports on
 * stderr whether the event loop kept running meanwhile, how much was dropped and held, and whether
 * stdout was non-blocking before and after the writer was made, and exits.
 */
import { existsSync, readFileSync } from 'node:fs';
import pino from 'pino';
import { batchedStdout, logWriterStats } from '../../src/observability/log-writer.js';

const O_NONBLOCK = 0o4000;
const nonBlocking = () =>
  (Number.parseInt(readFileSync('/proc/self/fdinfo/1', 'utf8').match(/flags:\s*(\d+)/)![1]!, 8) & O_NONBLOCK) !== 0;
const linux = existsSync('/proc/self/fdinfo/1');
const before = linux ? nonBlocking() : undefined;
const log = pino({ level: 'info' }, batchedStdout());
const after = linux ? nonBlocking() : undefined;

const pad = 'x'.repeat(1000);
let ticks = 0;
const ticker = setInterval(() => ticks++, 5);
let n = 0;
const started = Date.now();
const burst = () => {
  for (let i = 0; i < 1000; i++, n++) log.info({ n, pad }, 'line');
  if (n < 96_000) {
    setImmediate(burst);
    return;
  }
  clearInterval(ticker);
  const report = {
    ticks,
    droppedBytes: logWriterStats.droppedBytes,
    ms: Date.now() - started,
    heldMiB: process.memoryUsage().arrayBuffers / 2 ** 20,
    ...(linux ? { nonBlocking: { before, after } } : {}),
  };
  process.stderr.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
};
burst();

/**
 * Logs 48 MiB through the gateway's stdout writer to a reader that does not read, then reports on
 * stderr whether the event loop kept running meanwhile and how much was dropped, and exits.
 */
import pino from 'pino';
import { batchedStdout, logWriterStats } from '../../src/observability/log-writer.js';

const log = pino({ level: 'info' }, batchedStdout());
const pad = 'x'.repeat(1000);
let ticks = 0;
const ticker = setInterval(() => ticks++, 5);
let n = 0;
const started = Date.now();
const burst = () => {
  for (let i = 0; i < 1000; i++, n++) log.info({ n, pad }, 'line');
  if (n < 48_000) {
    setImmediate(burst);
    return;
  }
  clearInterval(ticker);
  const held = process.memoryUsage().arrayBuffers / 2 ** 20;
  const report = { ticks, droppedBytes: logWriterStats.droppedBytes, ms: Date.now() - started, heldMiB: held };
  process.stderr.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
};
burst();

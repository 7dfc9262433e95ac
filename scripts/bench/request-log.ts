/**
 * npm run bench:request-log [-- --records 2000000 --rounds 5 --keys 50]
 *
 * CPU per request of the dashboard's request log alone (http/key-request-log.ts: the in-memory ring
 * of each API key's last requests), at its default bounds, with the entry the request hook gives it
 * built in the loop as the hook builds it (its fields, `Date.now()`, the request id). The median of
 * the rounds, from process.cpuUsage (user + system). `npm run bench` measures the same work on the
 * whole request path: its target "same process without the request log" switches `record` off for
 * its rounds (scripts/bench/server.ts).
 */
import { benchArgs } from './harness/options.js';
import { KeyRequestLog } from '../../src/http/key-request-log.js';

const { values } = benchArgs({
  options: {
    records: { type: 'string', default: '2000000' },
    rounds: { type: 'string', default: '5' },
    keys: { type: 'string', default: '50' },
  },
});

const records = Number(values.records);
const keys = Array.from(
  { length: Number(values.keys) },
  (_, i) => `b3c1f0e2-1111-2222-3333-${String(i).padStart(12, '0')}`,
);
const log = new KeyRequestLog();
const perRecord: number[] = [];
for (let round = 0; round < Number(values.rounds); round++) {
  const started = process.cpuUsage();
  for (let i = 0; i < records; i++)
    log.record(keys[i % keys.length]!, {
      at: Date.now(),
      method: 'GET',
      path: '/api/v1/user/me',
      statusCode: 200,
      durationMs: 1.2,
      requestId: `req-${i}`,
    });
  const used = process.cpuUsage(started);
  perRecord.push(((used.user + used.system) * 1000) / records);
  console.log(`round ${round + 1}: ${perRecord.at(-1)!.toFixed(0)} ns CPU per request recorded`);
}
const median = [...perRecord].sort((a, b) => a - b)[perRecord.length >> 1]!;
console.log(
  `request log, median of ${perRecord.length} rounds of ${records} requests over ${keys.length} keys: ${median.toFixed(0)} ns CPU per request (${log.size} held)`,
);

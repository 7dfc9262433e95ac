/** A webhook receiver for bench:webhooks: answers 200, prints its URL, then p50/p99 once `expected` events arrived. */
import { createServer } from 'node:http';

const expected = Number(process.argv[2]);
const latencies: number[] = [];
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (c: Buffer) => chunks.push(c));
  request.on('end', () => {
    response.end('ok');
    const event = JSON.parse(Buffer.concat(chunks).toString()) as { data: { t: number } };
    latencies.push(Date.now() - event.data.t);
    if (latencies.length === expected) {
      latencies.sort((a, b) => a - b);
      process.stdout.write(
        `${JSON.stringify({ p50: latencies[Math.floor(expected * 0.5)], p99: latencies[Math.floor(expected * 0.99)] })}\n`,
      );
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks` })}\n`,
  );
});

/**
 * A webhook receiver for `npm run bench:events`: answers 200 at once and remembers when each event
 * id first arrived; `GET /arrivals` answers them as `{ "<event id>": <ms since epoch> }`.
 */
import { createServer } from 'node:http';

const arrivals: Record<string, number> = {};
const server = createServer((request, response) => {
  if (request.method === 'GET') {
    response.end(JSON.stringify(arrivals));
    return;
  }
  const at = Date.now();
  const chunks: Buffer[] = [];
  request.on('data', (c: Buffer) => chunks.push(c));
  request.on('end', () => {
    response.end('ok');
    const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: string };
    arrivals[id] ??= at;
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ ready: true, pid: process.pid, port: (server.address() as { port: number }).port })}\n`,
  );
});

import { createServer } from 'node:http';
import type pg from 'pg';
import type { StatementCounter } from './statement-counter.js';
import { statsSinceLastCall } from './stats-flush.js';

/**
 * The plain `node:http` server every bare-`pg` peer of bench:money runs (money-ceiling.ts,
 * money-reference.ts, money-exact.ts): `GET /stats` answers the statement counts since the last
 * call (the pool's idle sessions made to report first, see stats-flush.ts); any other request is
 * `work(path, body)`, answered 201 when it resolves, 500 with its message when it fails, 404 when
 * `work` has nothing for the path. Prints the ready line the harness waits for, and ends the pool
 * on SIGTERM.
 */
export async function servePeer(
  pool: pg.Pool,
  counter: StatementCounter,
  work: (path: string, body: Record<string, string>) => Promise<unknown> | undefined,
): Promise<void> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const fail = (error: Error) => {
        response.statusCode = 500;
        response.end(JSON.stringify({ error: error.message }));
      };
      const path = request.url ?? '';
      if (path.startsWith('/stats')) {
        response.setHeader('content-type', 'application/json');
        // `?flush=0`: counts only (a second has not passed since the last flush: see stats-flush.ts).
        void statsSinceLastCall(counter, path.endsWith('flush=0') ? [] : [pool]).then(
          (counts) => response.end(JSON.stringify(counts)),
          fail,
        );
        return;
      }
      const done = work(path, JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, string>);
      if (!done) {
        response.statusCode = 404;
        response.end();
        return;
      }
      done.then(() => {
        response.statusCode = 201;
        response.end('{}');
      }, fail);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(
    `${JSON.stringify({ ready: true, pid: process.pid, port: (server.address() as { port: number }).port })}\n`,
  );
  process.on('SIGTERM', async () => {
    server.close();
    await pool.end();
    process.exit(0);
  });
}

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Child, spawnTs } from '../helpers/child.js';

/**
 * The tracing SDK and its OTLP exporter load only when an endpoint is configured (a dynamic import
 * in main.ts, a chunk of its own in the bundle): this start, from the bundle as `npm start` runs
 * it, proves that path loads and exports a request's spans to a collector.
 */
describe('traces exported over OTLP/HTTP by the started server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgw-otlp-'));
  const posts: { path: string; body: Buffer }[] = [];
  const collector = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      posts.push({ path: request.url ?? '', body: Buffer.concat(chunks) });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  let child: Child | undefined;
  afterAll(async () => {
    if (child && child.process.exitCode === null) child.process.kill('SIGKILL');
    await child?.exited;
    await new Promise((resolve) => collector.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the spans of a request to <endpoint>/v1/traces, at the latest when the server stops', async () => {
    const port = await new Promise<number>((resolve) =>
      collector.listen(0, '127.0.0.1', () => resolve((collector.address() as { port: number }).port)),
    );
    child = spawnTs('src/main.ts', [], {
      PGLITE_DATA_DIR: join(dir, 'pglite'),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
      SEED_DEMO: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_SERVICE_NAME: 'otlp-export-test',
    });
    const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/);
    expect((await fetch(`${url}/api/v1`)).status).toBe(200);
    child.process.kill('SIGTERM');
    expect(await child.exited, child.output()).toBe(0);
    expect(posts.length, child.output()).toBeGreaterThan(0);
    expect(posts.every((post) => post.path === '/v1/traces')).toBe(true);
    expect(Buffer.concat(posts.map((post) => post.body)).toString('latin1')).toContain('otlp-export-test');
  });
});

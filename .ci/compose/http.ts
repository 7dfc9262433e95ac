import { createServer } from 'node:net';
import { CheckFailure } from './processes.js';

/** A port free on this machine now (the kernel's choice), for one instance's listener. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Answer {
  status: number;
  text: string;
}

/** One HTTP request to an instance on this machine, with an API key when given. */
export async function request(
  port: number,
  method: string,
  path: string,
  options: { key?: string; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.key) headers['X-API-KEY'] = options.key;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, text: await response.text() };
}

/** The answer's JSON when its status is the expected one, else a CheckFailure naming the request and the body. */
export function expectStatus<T = { data: Record<string, unknown> }>(answer: Answer, status: number, what: string): T {
  if (answer.status !== status)
    throw new CheckFailure(`${what}: answered ${answer.status}, expected ${status}: ${answer.text.slice(0, 2_000)}`);
  return JSON.parse(answer.text) as T;
}

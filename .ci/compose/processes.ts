import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';

/**
 * The deployment check's processes: each one a container's main process, started in the runtime
 * directory with only the environment the container would have (no variable of the CI shell leaks
 * in: .ci/run exports DATABASE_URL and REDIS_URL), its stdout and stderr kept and written to
 * <logs>/<name>.out and .err.
 */

export interface Started {
  name: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has exited and its pipes are read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<Started>();

/** What a container of a Debian Node image has besides the image's and service's variables. */
export function containerBase(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: home };
}

export function start(
  name: string,
  argv: string[],
  options: { cwd: string; env: Record<string, string>; logs: string },
): Started {
  const [command = '', ...args] = argv;
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const outFile = createWriteStream(join(options.logs, `${name}.out`));
  const errFile = createWriteStream(join(options.logs, `${name}.err`));
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk;
    outFile.write(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk;
    errFile.write(chunk);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (error) => {
      err += `${error.message}\n`;
      resolve({ code: null, signal: null });
    });
    child.on('close', (code, signal) => {
      outFile.end();
      errFile.end();
      running.delete(started);
      resolve({ code, signal });
    });
  });
  const started: Started = { name, child, stdout: () => out, stderr: () => err, exited };
  running.add(started);
  return started;
}

/** SIGKILL to every process still running (on failure or interruption). */
export function killAll(): void {
  for (const proc of running) proc.child.kill('SIGKILL');
}

/** The last lines of a process's output, for a failure message. */
export function tail(proc: Started, lines = 25): string {
  const pick = (text: string) => text.trimEnd().split('\n').slice(-lines).join('\n');
  return `--- ${proc.name} stdout (last ${lines} lines)\n${pick(proc.stdout())}\n--- ${proc.name} stderr\n${pick(proc.stderr())}`;
}

export class CheckFailure extends Error {}

/** Runs a one-shot command to completion: exit code 0 within `limitMs`, else a CheckFailure with its output. */
export async function runToCompletion(proc: Started, limitMs: number): Promise<number> {
  const started = performance.now();
  const result = await Promise.race([proc.exited, delay(limitMs).then(() => 'timeout' as const)]);
  if (result === 'timeout') {
    proc.child.kill('SIGKILL');
    throw new CheckFailure(`${proc.name} still running after ${limitMs / 1000} s\n${tail(proc)}`);
  }
  if (result.code !== 0)
    throw new CheckFailure(
      `${proc.name} exited with ${result.code === null ? `signal ${result.signal}` : `code ${result.code}`}\n${tail(proc)}`,
    );
  return Math.round(performance.now() - started);
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Polls `url` until it answers 200; fails when the process exits first or after `limitMs`. Returns the ms it took. */
export async function waitUntilReady(proc: Started, url: string, limitMs: number): Promise<number> {
  const started = performance.now();
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  while (performance.now() - started < limitMs) {
    if (exited) throw new CheckFailure(`${proc.name} exited before ${url} answered 200\n${tail(proc)}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return Math.round(performance.now() - started);
    // The poll interval between two looks at the endpoint.
    await delay(100);
  }
  throw new CheckFailure(`${proc.name}: ${url} did not answer 200 within ${limitMs / 1000} s\n${tail(proc)}`);
}

/** SIGTERM, then exit code 0 within `graceMs` (what `docker stop` / `docker compose stop` allow before SIGKILL). */
export async function stopWithin(proc: Started, graceMs: number, by: string): Promise<number> {
  const started = performance.now();
  proc.child.kill('SIGTERM');
  const result = await Promise.race([proc.exited, delay(graceMs).then(() => 'timeout' as const)]);
  if (result === 'timeout') {
    proc.child.kill('SIGKILL');
    throw new CheckFailure(`${proc.name} still running ${graceMs / 1000} s after SIGTERM (${by})\n${tail(proc)}`);
  }
  if (result.code !== 0)
    throw new CheckFailure(
      `${proc.name} exited with ${result.code === null ? `signal ${result.signal}` : `code ${result.code}`} after SIGTERM (expected 0)\n${tail(proc)}`,
    );
  return Math.round(performance.now() - started);
}

/** Every stdout line of a server is one JSON object (the log stream); anything else is named. */
export function nonJsonStdoutLines(proc: Started): string[] {
  return proc
    .stdout()
    .split('\n')
    .filter((line) => line !== '')
    .filter((line) => {
      try {
        const value: unknown = JSON.parse(line);
        return value === null || typeof value !== 'object';
      } catch {
        return true;
      }
    });
}

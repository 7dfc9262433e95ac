import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { spawnServer } from './pinning.js';

/** A server process started for a bench, pinned to CPU 0, with what it printed on its ready line. */
export interface Started<Ready> {
  /** The server's own pid (from its ready line), whose CPU time the rounds read. */
  pid: number;
  ready: Ready;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Spawns `script` (TypeScript, run through tsx) pinned to CPU 0 and waits for the first stdout line
 * starting with `{"ready"`: a JSON object that must carry `pid` and whatever the bench needs (ports,
 * keys). Rejects if the process exits first or takes longer than `timeoutMs` (migrations and seeding
 * on a loaded machine can take a while).
 */
export async function startServer<Ready extends { pid: number }>(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 180_000,
  cpu = 0,
): Promise<Started<Ready>> {
  const child = spawnServer(script, args, env, cpu);
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} not ready after ${timeoutMs} ms`)), timeoutMs);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{"ready"')) return;
      clearTimeout(timer);
      // From here on the server's output (log lines at its default level) is drained unread, so
      // the load generator's core does not spend time parsing it.
      lines.close();
      child.stdout!.resume();
      resolve(JSON.parse(line) as Ready);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: ready.pid,
    ready,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * `script` (a bench server, TypeScript) bundled as `npm start` runs the gateway: from dist/, without
 * tsx, whose per-module source maps and transform caches would otherwise sit in the measured
 * process's heap. `BENCH_TSX=1` runs the TypeScript through tsx as before. Pass the result to
 * startServer.
 */
export async function compiledServer(script: string): Promise<string> {
  if (process.env.BENCH_TSX) return script;
  const { buildBenchServer } = await import('../../build.mjs');
  return buildBenchServer(script);
}

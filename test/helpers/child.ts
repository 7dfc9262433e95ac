import { type ChildProcess, spawn } from 'node:child_process';

export interface Child {
  process: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/** Runs a TypeScript entry point of this repo in a child Node process (through tsx). */
export function spawnTs(script: string, args: string[], env: Record<string, string>): Child {
  return spawnCommand(process.execPath, ['--import', 'tsx', script, ...args], env);
}

/** Runs any command (e.g. `npm start`) with this repo as its directory, its output collected. */
export function spawnCommand(command: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(command, args, {
    env: { ...process.env, DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  // 'exit' can come before the last of stdout and stderr is read; 'close' comes after, unless a
  // grandchild that outlived the process still holds its pipes: then at most a second later.
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      const done = () => resolve(code);
      child.once('close', done);
      setTimeout(done, 1_000).unref();
    }),
  );
  return {
    process: child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`Timed out waiting for ${pattern}; output so far:\n${output}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(() => setTimeout(check, 0));
        check();
      });
    },
  };
}

/** Runs a script to completion and returns its exit code and output. */
export async function runTs(script: string, args: string[], env: Record<string, string>) {
  const child = spawnTs(script, args, env);
  const code = await child.exited;
  return { code, output: child.output() };
}

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { DIST } from '../../scripts/build.mjs';

export interface Child {
  process: ChildProcess;
  output(): string;
  /**
   * Resolves with the first match of `pattern` in stdout+stderr; rejects, with the output, when
   * the process exits without printing it. `capMs` only ends a wait on a process that hangs (a
   * loaded machine is slow, not wrong: no verdict depends on how long a start takes).
   */
  waitFor(pattern: RegExp, capMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/** How long a wait on a child's output may last before the child counts as hung. */
const HUNG_AFTER_MS = 240_000;

/**
 * Entry points run from the bundle test/setup/server-bundle.ts builds (as `npm start` runs them)
 * rather than through tsx: one file to load instead of ~1,500 modules transpiled in each child.
 */
const BUNDLED: Record<string, string> = {
  'src/main.ts': join(DIST, 'src/main.js'),
  'scripts/admin.ts': join(DIST, 'scripts/admin.js'),
  'scripts/migrate.ts': join(DIST, 'scripts/migrate.js'),
};

/** Runs an entry point of this repo in a child Node process: the server's bundle, other scripts through tsx. */
export function spawnTs(script: string, args: string[], env: Record<string, string>): Child {
  const bundled = BUNDLED[script];
  if (bundled) return spawnCommand(process.execPath, [bundled, ...args], env);
  return spawnCommand(process.execPath, ['--import', 'tsx', script, ...args], env);
}

/**
 * A test's afterEach: every child it started and left running is killed (SIGKILL, nothing to
 * finish), and each one's exit waited for; `children` is emptied.
 */
export async function killChildren(children: Child[]): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    await child.exited;
  }
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
    waitFor(pattern, capMs = HUNG_AFTER_MS) {
      return new Promise((resolve, reject) => {
        let settled = false;
        const finish = (outcome: () => void) => {
          if (settled) return;
          settled = true;
          listeners.delete(check);
          clearTimeout(timer);
          outcome();
        };
        const check = () => {
          const match = output.match(pattern);
          if (match) finish(() => resolve(match));
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(new Error(`No ${pattern} after ${capMs} ms (the process hangs); output so far:\n${output}`)),
            ),
          Math.max(capMs, HUNG_AFTER_MS),
        );
        listeners.add(check);
        // All of the output is read by the time `exited` resolves: no match then means there never will be.
        void exited.then((code) => {
          check();
          finish(() => reject(new Error(`Exited (${code}) without printing ${pattern}; output:\n${output}`)));
        });
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

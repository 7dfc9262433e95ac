import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { YOUNG_GENERATION_FLAGS } from '../../../src/gc-tuning.js';

/** Whether the server and the load generator can be kept on separate cores (Linux taskset, 2+ cores). */
export const canPin = (() => {
  if (cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Runs `main` in a copy of this script pinned to CPU 1 (the load generator's core), or here when
 * pinning is unavailable or this already is that copy.
 */
export async function onLoadCore(main: () => Promise<void>): Promise<void> {
  if (!canPin || process.env.BENCH_PINNED) return main();
  const child = spawn('taskset', ['-c', '1', process.execPath, '--import', 'tsx', ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  process.exit(code ?? 1);
}

/** Starts a server script (TypeScript, or a compiled .js) on CPU 0 (or `cpu`, for helpers that must stay off the server's core). */
export function spawnServer(script: string, args: string[], env: NodeJS.ProcessEnv, cpu = 0): ChildProcess {
  // BENCH_PROFILE_DIR: write a V8 CPU profile of the server there, to see where its time goes.
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
    : [];
  // A compiled script (see compiledServer) runs as `npm start` runs the gateway, with its young
  // generation's size; a TypeScript one through tsx.
  const loader = script.endsWith('.js') ? [...YOUNG_GENERATION_FLAGS] : ['--import', 'tsx'];
  const node = [process.execPath, ...profile, ...loader, script, ...args];
  const [command, ...rest] = canPin ? ['taskset', '-c', String(cpu), ...node] : node;
  return spawn(command!, rest, { env, stdio: ['ignore', 'pipe', 'inherit'] });
}

/**
 * npm run bench:startup [-- --runs 3 --idle 5 --load 10]
 *
 * The embedded default's footprint, as `npm start` runs it (node scripts/launch.mjs src/main,
 * PGlite, default logging, workers and the sandbox demo account on): wall time from spawning the
 * process to its first HTTP answer on a fresh data directory and on an existing one, the CPU the
 * process spent getting there, its resident memory once idle, and its peak resident memory
 * (VmHWM) while REST, GraphQL and a bill-records page are driven against it. dist/ is built first
 * (not counted: `npm start` builds it once, when the sources change). The server runs on CPU 0,
 * this process and the load on CPU 1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDist, distIsStale, ROOT } from '../build.mjs';
import { BILL_PAGE, ME_QUERY } from './documents.js';
import { canPin, cpuMicros, httpTarget, machineLine, median, onLoadCore, peakRssMiB, rssMiB } from './harness/index.js';
import { YOUNG_GENERATION_FLAG } from '../../src/gc-tuning.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    idle: { type: 'string', default: '5' },
    load: { type: 'string', default: '10' },
  },
});

interface Running {
  child: ChildProcess;
  pid: number;
  port: number;
  /** Wall time from spawn to the first HTTP answer, ms. */
  firstAnswerMs: number;
  /** CPU the process used until then, ms. */
  cpuMs: number;
  demoKey: Promise<string | undefined>;
  stop(): Promise<void>;
}

/** `npm start` on `dataDir`, timed to the first answer of GET /healthz. */
async function start(dataDir: string): Promise<Running> {
  // As package.json's start script runs it, with the young generation's size.
  const node = [process.execPath, YOUNG_GENERATION_FLAG, join(ROOT, 'scripts/launch.mjs'), 'src/main'];
  const [command, ...args] = canPin ? ['taskset', '-c', '0', ...node] : node;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGLITE_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    // The load is one key's: without this, most of it would be answered 429 by the per-key limit.
    RATE_LIMIT_PER_MINUTE: '1000000000',
  };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'BENCH_PINNED', 'NODE_OPTIONS']) delete env[name];
  const started = performance.now();
  const child = spawn(command!, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  // Port 0: the server says where it listens (a guessed port may belong to another process).
  let port = 0;
  const demoKey = new Promise<string | undefined>((resolve) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      port ||= Number(stderr.match(/listening on http:\/\/[^:\s]+:(\d+)/)?.[1] ?? 0);
      const key = stderr.match(/shown once\): (\S+)/)?.[1];
      if (key) resolve(key);
    });
    child.once('exit', () => resolve(undefined));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${stderr}`);
    try {
      if (!port) throw new Error('not listening yet');
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      await response.arrayBuffer();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  const firstAnswerMs = performance.now() - started;
  const pid = child.pid!;
  return {
    child,
    pid,
    port,
    firstAnswerMs,
    cpuMs: cpuMicros(pid) / 1000,
    demoKey,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

const round = (n: number) => Math.round(n);

await onLoadCore(async () => {
  if (distIsStale()) await buildDist();
  const runs = Number(values.runs);
  const fresh: Running[] = [];
  const existing: Running[] = [];
  const dirs: string[] = [];
  let figures: { idle: number; peak: number; requests: number; errors: number } | undefined;
  try {
    for (let run = 0; run < runs; run += 1) {
      const dir = mkdtempSync(join(tmpdir(), 'pgw-startup-'));
      dirs.push(dir);
      const first = await start(join(dir, 'pglite'));
      fresh.push(first);
      await first.demoKey;
      await first.stop();
      const again = await start(join(dir, 'pglite'));
      existing.push(again);
      console.log(
        `run ${run + 1}: fresh ${round(first.firstAnswerMs)} ms (CPU ${round(first.cpuMs)} ms), existing ${round(again.firstAnswerMs)} ms (CPU ${round(again.cpuMs)} ms)`,
      );
      if (run < runs - 1) {
        await again.stop();
        continue;
      }
      // The last server stays up: idle, then load.
      await new Promise((resolve) => setTimeout(resolve, Number(values.idle) * 1000));
      const idle = rssMiB(again.pid);
      const key = await first.demoKey;
      const headers: Record<string, string> = { 'x-api-key': key ?? '', 'content-type': 'application/json' };
      const base = `http://127.0.0.1:${again.port}`;
      const targets = [
        httpTarget({ name: 'rest me', pid: again.pid, url: `${base}/api/v1/user/me`, headers }),
        httpTarget({
          name: 'graphql me',
          pid: again.pid,
          url: `${base}/graphql`,
          method: 'POST',
          headers,
          body: JSON.stringify({ query: ME_QUERY }),
        }),
        httpTarget({
          name: 'graphql bill page',
          pid: again.pid,
          url: `${base}/graphql`,
          method: 'POST',
          headers,
          body: JSON.stringify({ query: BILL_PAGE }),
        }),
        httpTarget({ name: 'rest bill records', pid: again.pid, url: `${base}/api/v1/bills/records`, headers }),
      ];
      let requests = 0;
      let errors = 0;
      for (const target of targets) {
        const load = await target.drive(Number(values.load));
        requests += load.requests;
        errors += load.errors;
      }
      figures = { idle, peak: peakRssMiB(again.pid), requests, errors };
      await again.stop();
    }
  } finally {
    for (const run of [...fresh, ...existing]) await run.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const ms = (list: Running[], pick: (r: Running) => number) => round(median(list.map(pick)));
  console.log(
    `\nMeasured ${machineLine()}; npm start (PGlite, default settings), ${runs} runs, medians.\n\n` +
      '| figure | value |\n|---|---|\n' +
      `| start to first answer, fresh data directory | ${ms(fresh, (r) => r.firstAnswerMs)} ms (CPU ${ms(fresh, (r) => r.cpuMs)} ms) |\n` +
      `| start to first answer, existing data directory | ${ms(existing, (r) => r.firstAnswerMs)} ms (CPU ${ms(existing, (r) => r.cpuMs)} ms) |\n` +
      `| RSS idle (${values.idle} s after start) | ${figures?.idle} MiB |\n` +
      `| peak RSS under load (${values.load} s each: REST me, GraphQL me, GraphQL bill page, REST bill records; 32 connections) | ${figures?.peak} MiB (${figures?.requests} requests, ${figures?.errors} errors) |`,
  );
  process.exit(0);
});

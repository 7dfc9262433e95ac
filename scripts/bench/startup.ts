/**
 * npm run bench:startup [-- --runs 3 --idle 5 --load 10]
 *
 * `npm start` as a person runs it on a fresh clone after `npm install`. Each run copies the
 * repository's files (tracked and new, as `git ls-files` lists them: no dist/, no data/) into a
 * temporary folder whose node_modules is this one's (linked: installed, with the image of the
 * embedded database that npm install made), then times, to the first answer of GET /healthz:
 *   - the first start: node scripts/launch.mjs src/main as `npm start` runs it, with no dist/ (the
 *     build is included) and a new embedded database (PGlite, default settings);
 *   - the warm start: the same again, dist/ built and the database there.
 * Each start leads a process group of its own, as `npm start` in a terminal does: its CPU counts the
 * processes it waited for (esbuild's service, an image maker), and its memory is the resident memory
 * of every process in the group, at the first answer and after `idle` seconds. The last warm server
 * then takes `load` seconds each of REST me, GraphQL me, a GraphQL bill page and REST bill records at
 * 32 connections (peak RSS of the group). Also timed: making the image into an empty cache (what
 * npm install's postinstall adds to an install). Figures are medians of `runs`; the machine's load
 * average is printed before and after, as the figures move with it.
 *
 * `--against <commit>`: instead, that commit's warm start beside this tree's, started in turn
 * (`runs` rounds, the order swapped each round) on one machine at one time, so a busy machine
 * slows both alike: medians of each side's warm start, its CPU and its group's memory, and the
 * ratio. That is how "unchanged within 10 %" is told on a host whose load is never quiet.
 */
import { benchArgs } from './harness/options.js';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../build.mjs';
import { YOUNG_GENERATION_FLAGS } from '../../src/gc-tuning.js';
import { BILL_PAGE, ME_QUERY } from './documents.js';
import { httpTarget, machineLine, median } from './harness/index.js';
import { groupRssMiB, processGroup } from './process-group.js';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '3' },
    idle: { type: 'string', default: '5' },
    load: { type: 'string', default: '10' },
    against: { type: 'string' },
  },
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

/** A fresh clone's files: tracked and new ones (what a commit of the working tree would hold). */
function freshClone(): string {
  const clone = mkdtempSync(join(tmpdir(), 'pgw-clone-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    try {
      cpSync(join(ROOT, file), join(clone, file));
    } catch {
      // Listed but deleted in the working tree.
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  return clone;
}

/** A commit's files (`git archive`), with this node_modules linked. */
function cloneOf(ref: string): string {
  const clone = mkdtempSync(join(tmpdir(), 'pgw-clone-'));
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(ref)} | tar -x -C ${JSON.stringify(clone)}`], { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  return clone;
}

/** CPU of a process group, in ms: its living members and the children they waited for. */
function groupCpuMs(group: number): number {
  return Math.round(processGroup(group).reduce((sum, p) => sum + p.cpuMicros, 0) / 1000);
}

interface Running {
  child: ChildProcess;
  group: number;
  port: number;
  /** Wall time from spawn to the first HTTP answer, ms. */
  firstAnswerMs: number;
  /** CPU of the group until then, ms. */
  cpuMs: number;
  /** Resident memory of the group at the first answer, MiB. */
  rssAtAnswer: number;
  /** The group's processes at the first answer, by name. */
  members: string[];
  demoKey: Promise<string | undefined>;
  stop(): Promise<void>;
}

/** `npm start` in `clone` on `dataDir`, in a process group of its own, timed to the first answer. */
async function start(clone: string, dataDir: string): Promise<Running> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGLITE_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    // The load is one key's: without this, most of it would be answered 429 by the per-key limit.
    RATE_LIMIT_PER_MINUTE: '1000000000',
  };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'NODE_OPTIONS']) delete env[name];
  const started = performance.now();
  const child = spawn(process.execPath, [...YOUNG_GENERATION_FLAGS, 'scripts/launch.mjs', 'src/main'], {
    cwd: clone,
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const group = child.pid!;
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
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-group, name);
    } catch {
      // The group is gone.
    }
  };
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${stderr}`);
    try {
      if (!port) throw new Error('not listening yet');
      await (await fetch(`http://127.0.0.1:${port}/healthz`)).arrayBuffer();
      break;
    } catch {
      await pause(10);
    }
  }
  const firstAnswerMs = performance.now() - started;
  return {
    child,
    group,
    port,
    firstAnswerMs,
    cpuMs: groupCpuMs(group),
    rssAtAnswer: groupRssMiB(group),
    members: processGroup(group).map((p) => p.name),
    demoKey,
    async stop() {
      if (child.exitCode === null) signal('SIGTERM');
      await Promise.race([exited, pause(15_000)]);
      signal('SIGKILL');
      await exited;
    },
  };
}

/** Making the image into an empty cache, as npm install's postinstall does: wall and CPU, ms. */
function timeImageMaking(): { ms: number; cpuMs: number } {
  const cache = mkdtempSync(join(tmpdir(), 'pgw-image-cache-'));
  try {
    const started = performance.now();
    const made = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/pglite-image.ts', '--cache', cache], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const ms = performance.now() - started;
    if (made.status !== 0) throw new Error(`making the image failed:\n${made.stderr}`);
    return { ms, cpuMs: Number(made.stderr.match(/CPU (\d+) ms/)?.[1]) };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n);

/** This tree's warm start against `ref`'s, alternated (see the header). */
async function compareWarmStarts(ref: string): Promise<void> {
  const sides = [
    { name: 'this tree', clone: freshClone() },
    { name: ref, clone: cloneOf(ref) },
  ].map((side) => ({
    ...side,
    dataDir: join(side.clone, 'data', 'pglite'),
    warm: [] as Running[],
    idle: [] as number[],
  }));
  const loadBefore = load();
  try {
    // Each side's first start builds it and makes its database.
    for (const side of sides) {
      const one = await start(side.clone, side.dataDir);
      await one.demoKey;
      await one.stop();
    }
    for (let run = 0; run < Number(values.runs); run += 1) {
      for (const side of run % 2 ? [...sides].reverse() : sides) {
        const again = await start(side.clone, side.dataDir);
        await pause(Number(values.idle) * 1000);
        side.idle.push(groupRssMiB(again.group));
        await again.stop();
        side.warm.push(again);
        console.log(
          `run ${run + 1}, ${side.name}: warm start ${round(again.firstAnswerMs)} ms (CPU ${again.cpuMs} ms, group ${again.rssAtAnswer} / ${side.idle.at(-1)} MiB); load ${load()}`,
        );
      }
    }
  } finally {
    for (const side of sides) rmSync(side.clone, { recursive: true, force: true });
  }
  const figure = (side: (typeof sides)[number]) => ({
    ms: round(median(side.warm.map((r) => r.firstAnswerMs))),
    cpu: round(median(side.warm.map((r) => r.cpuMs))),
    rss: round(median(side.warm.map((r) => r.rssAtAnswer))),
    idle: round(median(side.idle)),
  });
  const [now, then] = sides.map(figure) as [ReturnType<typeof figure>, ReturnType<typeof figure>];
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(
    `\nMeasured ${machineLine().split('; ')[0]}; load average before ${loadBefore}, after ${load()}; ${values.runs} rounds, medians.\n\n` +
      `| warm start | this tree | ${ref} | ratio |\n|---|---|---|---|\n` +
      `| to the first answer | ${now.ms} ms | ${then.ms} ms | ${ratio(now.ms, then.ms)} |\n` +
      `| CPU of the group | ${now.cpu} ms | ${then.cpu} ms | ${ratio(now.cpu, then.cpu)} |\n` +
      `| group's RSS at the answer | ${now.rss} MiB | ${then.rss} MiB | ${ratio(now.rss, then.rss)} |\n` +
      `| group's RSS ${values.idle} s later (idle) | ${now.idle} MiB | ${then.idle} MiB | ${ratio(now.idle, then.idle)} |`,
  );
}

if (values.against) {
  await compareWarmStarts(values.against);
  process.exit(0);
}

const runs = Number(values.runs);
const idleMs = Number(values.idle) * 1000;
const loadBefore = load();
const first: Running[] = [];
const warm: Running[] = [];
const firstIdle: number[] = [];
const warmIdle: number[] = [];
const clones: string[] = [];
let figures: { peak: number; requests: number; errors: number } | undefined;
try {
  for (let run = 0; run < runs; run += 1) {
    const clone = freshClone();
    clones.push(clone);
    const dataDir = join(clone, 'data', 'pglite');
    const one = await start(clone, dataDir);
    first.push(one);
    await one.demoKey;
    await pause(idleMs);
    firstIdle.push(groupRssMiB(one.group));
    await one.stop();
    const again = await start(clone, dataDir);
    warm.push(again);
    await pause(idleMs);
    warmIdle.push(groupRssMiB(again.group));
    console.log(
      `run ${run + 1}: first start ${round(one.firstAnswerMs)} ms (CPU ${one.cpuMs} ms, group ${one.rssAtAnswer} MiB at the answer, ${firstIdle.at(-1)} MiB idle), ` +
        `warm start ${round(again.firstAnswerMs)} ms (CPU ${again.cpuMs} ms, group ${warmIdle.at(-1)} MiB idle); load ${load()}`,
    );
    if (run < runs - 1) {
      await again.stop();
      continue;
    }
    // The last server stays up for the load.
    const key = await one.demoKey;
    const headers: Record<string, string> = { 'x-api-key': key ?? '', 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${again.port}`;
    const pid = again.group;
    const targets = [
      httpTarget({ name: 'rest me', pid, url: `${base}/api/v1/user/me`, headers }),
      httpTarget({
        name: 'graphql me',
        pid,
        url: `${base}/graphql`,
        method: 'POST',
        headers,
        body: JSON.stringify({ query: ME_QUERY }),
      }),
      httpTarget({
        name: 'graphql bill page',
        pid,
        url: `${base}/graphql`,
        method: 'POST',
        headers,
        body: JSON.stringify({ query: BILL_PAGE }),
      }),
      httpTarget({ name: 'rest bill records', pid, url: `${base}/api/v1/bills/records`, headers }),
    ];
    let requests = 0;
    let errors = 0;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, groupRssMiB(again.group));
    }, 100);
    try {
      for (const target of targets) {
        const result = await target.drive(Number(values.load));
        requests += result.requests;
        errors += result.errors;
      }
    } finally {
      clearInterval(sampler);
    }
    figures = { peak, requests, errors };
    await again.stop();
  }
} finally {
  for (const run of [...first, ...warm]) await run.stop();
  for (const clone of clones) rmSync(clone, { recursive: true, force: true });
}
const image = timeImageMaking();
const members = [...new Set([...first, ...warm].map((r) => r.members.sort().join(' + ')))].join('; ');
const ms = (list: Running[], pick: (r: Running) => number) => round(median(list.map(pick)));
console.log(
  // The machine line without its pinning note: nothing here is pinned, as npm start is not.
  `\nMeasured ${machineLine().split('; ')[0]}; load average before ${loadBefore}, after ${load()}; ${runs} runs, medians.\n\n` +
    '| figure | value |\n|---|---|\n' +
    `| first start, build included (fresh clone after npm install, new database) | ${ms(first, (r) => r.firstAnswerMs)} ms (CPU ${ms(first, (r) => r.cpuMs)} ms) |\n` +
    `| its process group's RSS: at the first answer / ${values.idle} s later | ${ms(first, (r) => r.rssAtAnswer)} / ${round(median(firstIdle))} MiB |\n` +
    `| warm start (dist/ built, existing database) | ${ms(warm, (r) => r.firstAnswerMs)} ms (CPU ${ms(warm, (r) => r.cpuMs)} ms) |\n` +
    `| its process group's RSS: at the first answer / ${values.idle} s later | ${ms(warm, (r) => r.rssAtAnswer)} / ${round(median(warmIdle))} MiB |\n` +
    `| process group's peak RSS under load (${values.load} s each: REST me, GraphQL me, GraphQL bill page, REST bill records; 32 connections) | ${figures?.peak} MiB (${figures?.requests} requests, ${figures?.errors} errors) |\n` +
    `| making the image into an empty cache (npm install's postinstall) | ${round(image.ms)} ms (CPU ${image.cpuMs} ms) |\n` +
    `| processes in a start's group at its first answer | ${members} |`,
);
process.exit(0);

/**
 * npm run bench:idle [-- --settle 60 --seconds 60]
 *
 * What an idle gateway costs: the gateway as `npm start` runs it (built into dist/, its workers on:
 * the event relay, the job runner, the readiness check, the metrics' event-loop sampler), started on
 * a new database with nothing to do, then left alone for `settle` seconds (its start and its first
 * rounds), then watched for `seconds`: its process's CPU (user + system, /proc) per second, the
 * database transactions it causes per second, and on PostgreSQL the CPU of the database's backends
 * per second. Once on PostgreSQL (DATABASE_URL; a database of its own, dropped after) and once on
 * PGlite (a new data directory), one after the other. Goal: at most 5 ms of CPU a second.
 * Then each idle loop's share (idle-loops.ts): one wake-up's CPU, measured in this process, times
 * the wake-ups a second the code's waits give it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildDist, ROOT } from '../build.mjs';
import { YOUNG_GENERATION_FLAGS } from '../../src/gc-tuning.js';
import { cpus } from 'node:os';
import { cpuMicros, loadAverage, postgresCpu, postgresCpuBetween } from './harness/index.js';
import { benchArgs } from './harness/options.js';
import { idleLoopCosts, type LoopCost } from './idle-loops.js';

const { values } = benchArgs({
  options: {
    settle: { type: 'string', default: '60' },
    seconds: { type: 'string', default: '60' },
  },
});
const settleMs = Number(values.settle) * 1000;
const seconds = Number(values.seconds);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Figures {
  engine: string;
  cpuMsPerSecond: number;
  transactionsPerSecond: number | undefined;
  postgresMsPerSecond: number | undefined;
}

function start(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...YOUNG_GENERATION_FLAGS, join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let banner = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      banner += chunk.toString();
      if (banner.includes('listening on')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening:\n${banner}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function measure(engine: string, env: NodeJS.ProcessEnv, stats?: pg.Client): Promise<Figures> {
  const child = await start(env);
  try {
    await pause(settleMs);
    const transactions = async () =>
      stats
        ? Number(
            (
              await stats.query<{ n: string }>(
                'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
              )
            ).rows[0]!.n,
          )
        : 0;
    const pgBefore = stats ? await postgresCpu(stats) : undefined;
    const xactBefore = await transactions();
    const cpuBefore = cpuMicros(child.pid!);
    await pause(seconds * 1000);
    const cpu = cpuMicros(child.pid!) - cpuBefore;
    // The stats session's own two queries are left out.
    const xacts = (await transactions()) - xactBefore - (stats ? 1 : 0);
    const pgAfter = stats ? await postgresCpu(stats) : undefined;
    return {
      engine,
      cpuMsPerSecond: cpu / 1000 / seconds,
      transactionsPerSecond: stats ? xacts / seconds : undefined,
      postgresMsPerSecond: pgBefore && pgAfter ? postgresCpuBetween(pgBefore, pgAfter) / 1000 / seconds : undefined,
    };
  } finally {
    await stop(child);
  }
}

await buildDist({ quiet: true });
const loadBefore = loadAverage();
const results: Figures[] = [];
const base = process.env.DATABASE_URL;
const loops: Array<{ engine: string; costs: LoopCost[] }> = [];
if (base) {
  const name = `bench_idle_${process.pid}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const stats = new pg.Client({ connectionString: url.toString() });
  try {
    await stats.connect();
    results.push(await measure('PostgreSQL', { DATABASE_URL: url.toString() }, stats));
    loops.push({ engine: 'PostgreSQL', costs: await idleLoopCosts(base) });
  } finally {
    await stats.end();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
} else console.log('DATABASE_URL is not set: PostgreSQL skipped');
const dataDir = mkdtempSync(join(tmpdir(), 'pgw-idle-'));
try {
  const { DATABASE_URL: _, ...withoutPostgres } = process.env;
  process.env = withoutPostgres;
  results.push(await measure('PGlite', { PGLITE_DATA_DIR: join(dataDir, 'db') }));
  loops.push({ engine: 'PGlite', costs: await idleLoopCosts(undefined) });
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

console.log(
  `\n${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus()[0]?.model.trim()} (${cpus().length} cores), Node ${process.version}; nothing pinned; load average before ${loadBefore}, after ${loadAverage()}`,
);
console.log(
  `settled ${settleMs / 1000} s after the start, then watched ${seconds} s; goal: at most 5 ms of CPU a second\n`,
);
console.log('| database | gateway CPU ms/s | database transactions/s | PostgreSQL CPU ms/s |');
console.log('|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.engine} | ${r.cpuMsPerSecond.toFixed(1)} | ${r.transactionsPerSecond?.toFixed(1) ?? '–'} | ${r.postgresMsPerSecond?.toFixed(1) ?? '–'} |`,
  );

console.log(
  "\nEach loop at idle (this process: one wake-up's CPU, less an empty timer's; the sampler is an empty timer):\n",
);
console.log('| database | loop | CPU ms per wake-up | wake-ups/s | CPU ms/s |');
console.log('|---|---|---|---|---|');
for (const { engine, costs } of loops)
  for (const c of costs)
    console.log(
      `| ${engine} | ${c.loop} | ${c.msPerWakeUp.toFixed(2)} | ${c.wakeUpsPerSecond.toFixed(2)} | ${(c.msPerWakeUp * c.wakeUpsPerSecond).toFixed(2)} |`,
    );

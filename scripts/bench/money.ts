/**
 * `npm run bench:money`: money paths against the database's own ceiling, in one run on one
 * database (a fresh one, dropped after). On PostgreSQL: a bare-pg ceiling making the same durable
 * writes as a gateway P2P transfer (money-ceiling.ts) and its hot-account variant, then the
 * gateway's P2P transfer between 100 tenants, a hot-wallet transfer (one treasury sender), airtime
 * and bank-transfer deposits across the 100 tenants, all through REST with a unique
 * Idempotency-Key per request and one enabled webhook endpoint per tenant. Interleaved rounds,
 * medians; server CPU µs per request from /proc (the relay's work included), PostgreSQL's (the bench
 * database's backends and the WAL writer, checkpointer and background writer) and the whole
 * machine's busy CPU (/proc/stat: on two cores that is the budget, wherever the cost lands); commits and WAL
 * bytes per request from pg_stat_database / pg_current_wal_lsn (WAL is cluster-wide: other
 * databases' writes count too); commits and round trips leave out the relay's own transactions
 * (on PGlite too: statements inside its transactions are counted); commit → seq stamping lag from
 * the relay; what makes a latency tail, per round: the gateway's longest event-loop stall, its
 * longest GC pause and, on PGlite, the longest hold of its one connection; P2P p50/p99 at half its
 * peak rate after the rounds (a checkpoint, one warm-up round at that rate, then medians of as many
 * rounds). `--pglite`: the gateway paths on PGlite, c=16.
 *
 * `--only <regex>` keeps the paths whose name matches (e.g. `--only 'P2P|airtime|deposit'`), for a
 * short run of the paths in question; a ratio is printed only when its peer ran too.
 *
 *   npm run bench:money -- [--pglite] [--connections 16] [--warmup 5 --round 10 --rounds 3] [--only <regex>]
 *
 * `BENCH_KEEP_DB=1` keeps the bench database afterwards (its name is printed), to read its plans and
 * statistics. `BENCH_TAIL=1` prints, per half-peak round, when its answers of 50 ms or more were due
 * (grouped into runs), the load generator's own longest stall and, for the round and each run of
 * five or more slow answers, what the host did meanwhile (busy, steal, iowait, page-cache refaults,
 * major faults, CPU by process, processes started: harness/host-sampler.ts) and whether the
 * gateway finished a full garbage collection then.
 *
 * The gateway runs as `npm start` runs it: bundled from dist/ (harness `compiledServer`), not
 * through tsx, whose per-module source maps and transform caches made its heap larger and its full
 * collections longer (see docs/benchmarks.md, "The half-peak tail"). `BENCH_TSX=1` runs it through tsx.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { RELAY_ROUND_TRIPS } from '../../src/domain/events/relay.js';
import {
  compiledServer,
  cpuMicros,
  machineBusyMicros,
  machineLine,
  maximum,
  median,
  onLoadCore,
  pacedLoad,
  percentile,
  postgresCpu,
  postgresCpuBetween,
  roundFlags,
  roundOptions,
  type Started,
  startServer,
} from './harness/index.js';
import { sampleForeignXids } from './harness/foreign-xids.js';
import { type LockWaitSampler, lockWaitSampler } from './harness/lock-waits.js';
import { describeHost, type HostTick, postgresProcessName, startHostSampler } from './harness/host-sampler.js';
import type { PacedLoad } from './harness/paced.js';
import { solanaTransferRequests } from './money-solana.js';

/** How often the host is sampled during a half-peak round with `BENCH_TAIL`. */
const HOST_TICK_MS = 50;

interface Tenant {
  id: string;
  key: string;
}
interface GatewayReady {
  pid: number;
  port: number;
  statsPort: number;
  tenants: Tenant[];
  treasury: Tenant;
}

interface Target {
  name: string;
  pid: number;
  url: string;
  connections: number;
  /** Path, headers and body of each request (a fresh Idempotency-Key every time). */
  request: () => { path: string; headers: Record<string, string>; body: string };
  peer?: string;
  gateway: boolean;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  cpu: number;
  /** PostgreSQL CPU µs per request: the bench database's backends plus WAL writer, checkpointer, bgwriter. */
  pgCpu: number;
  /** Whole-machine busy CPU µs per request (/proc/stat): gateway, PostgreSQL, load generator, neighbours. */
  machineCpu: number;
  commits: number;
  wal: number;
  roundTrips: number;
  /** Gateway only: commits of transactions or statements that wrote, the relay's left out. */
  writingCommits: number;
  /** The gateway's longest event-loop stall (GC, synchronous work; PGlite's statements run on it too). */
  loopMax: number;
  /** PGlite: the longest its one connection was held by one statement or transaction. */
  hold: number;
  /** The gateway's longest garbage-collection pause, and all its pauses as a share of the round. */
  gcMax: number;
  gcShare: number;
  /** PostgreSQL: mean client backends running a statement, and of those waiting on a row lock. */
  busy: number;
  rowWaits: number;
  errors: number;
}

/**
 * begin, lock, debit, credit, posting, entries, transactions, key, 2 × (event, delivery, job), commit;
 * without webhook endpoints (`--endpoints 0`) no delivery and no job.
 */
const ceilingRoundTrips = (endpoints: number) => (endpoints > 0 ? 15 : 11);

const { values } = parseArgs({
  options: {
    ...roundFlags,
    pglite: { type: 'boolean', default: false },
    connections: { type: 'string', default: '16' },
    only: { type: 'string' },
    endpoints: { type: 'string', default: '1' },
  },
});

await onLoadCore(async () => {
  const rounds = roundOptions(values);
  const connections = Number(values.connections);
  const onPglite = values.pglite === true;
  const only = values.only ? new RegExp(values.only, 'i') : undefined;
  const wanted = (name: string) => !only || only.test(name);
  // Webhook endpoints per tenant (`--endpoints 0`: no deliveries at all, to see what they cost).
  const endpoints = Number(values.endpoints);
  if (!Number.isInteger(endpoints) || endpoints < 0 || endpoints > 1) throw new Error('--endpoints is 0 or 1');
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const dbName = `money_bench_${process.pid}`;
  const admin = onPglite ? undefined : new pg.Client({ connectionString: base.toString() });
  let stats: pg.Client | undefined;
  let locks: LockWaitSampler | undefined;
  const servers: Array<Started<{ pid: number }>> = [];
  try {
    let url: string | undefined;
    if (admin) {
      await admin.connect();
      await admin.query(`create database ${dbName}`);
      const own = new URL(base);
      own.pathname = `/${dbName}`;
      url = own.toString();
      stats = new pg.Client({ connectionString: url });
      await stats.connect();
    }
    const env = {
      ...process.env,
      ...(url ? { DATABASE_URL: url } : { DATABASE_URL: '' }),
      LOG_LEVEL: 'warn',
      BENCH_ENDPOINTS: String(endpoints),
    };
    console.log(`starting the gateway on ${onPglite ? 'PGlite' : `PostgreSQL ${dbName}`} (seeding 100 tenants)…`);
    const gateway = await startServer<GatewayReady>(
      await compiledServer('scripts/bench/money-server.ts'),
      [],
      env,
      600_000,
    );
    servers.push(gateway);
    const { tenants, treasury } = gateway.ready;
    const gatewayUrl = `http://127.0.0.1:${gateway.ready.port}`;
    const pick = () => tenants[Math.floor(Math.random() * tenants.length)]!;
    const other = (not: string) => {
      let t = pick();
      while (t.id === not) t = pick();
      return t;
    };
    const post = (key: string, path: string, body: unknown) => ({
      path,
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': randomUUID() },
      body: JSON.stringify(body),
    });
    const targets: Target[] = [];
    if (!onPglite && (wanted('bare-pg ceiling, P2P') || wanted('bare-pg ceiling, hot sender'))) {
      const ceiling = await startServer<{ pid: number; port: number }>(
        'scripts/bench/money-ceiling.ts',
        [JSON.stringify({ tenants: tenants.map(({ id }) => ({ id })), treasury: { id: treasury.id } })],
        env,
      );
      servers.push(ceiling);
      const ceilingUrl = `http://127.0.0.1:${ceiling.ready.port}`;
      targets.push(
        {
          name: 'bare-pg ceiling, P2P',
          pid: ceiling.pid,
          url: ceilingUrl,
          connections,
          request: () => ({ path: '/p2p', headers: {}, body: '' }),
          gateway: false,
        },
        {
          name: 'bare-pg ceiling, hot sender',
          pid: ceiling.pid,
          url: ceilingUrl,
          connections: 32,
          request: () => ({ path: '/hot', headers: {}, body: '' }),
          gateway: false,
        },
      );
    }
    targets.push(
      {
        name: 'gateway P2P transfer',
        pid: gateway.pid,
        url: gatewayUrl,
        connections,
        request: () => {
          const from = pick();
          return post(from.key, '/api/v1/wallet/transfer', { amount: 1, recipient: other(from.id).id });
        },
        ...(onPglite ? {} : { peer: 'bare-pg ceiling, P2P' }),
        gateway: true,
      },
      {
        name: 'gateway hot-wallet transfer',
        pid: gateway.pid,
        url: gatewayUrl,
        connections: onPglite ? connections : 32,
        request: () => post(treasury.key, '/api/v1/wallet/transfer', { amount: 1, recipient: pick().id }),
        ...(onPglite ? {} : { peer: 'bare-pg ceiling, hot sender' }),
        gateway: true,
      },
      {
        name: 'gateway airtime, 100 tenants',
        pid: gateway.pid,
        url: gatewayUrl,
        connections,
        request: () =>
          post(pick().key, '/api/v1/bills/buy-airtime', { phoneNumber: '08031234567', biller: 'mtn', amount: 100 }),
        peer: 'gateway P2P transfer',
        gateway: true,
      },
      {
        name: 'gateway deposit, 100 tenants',
        pid: gateway.pid,
        url: gatewayUrl,
        connections,
        request: () => post(pick().key, '/api/v1/wallet/deposits/bank-transfer', { amount: 100 }),
        peer: 'gateway P2P transfer',
        gateway: true,
      },
    );
    if (wanted('gateway Solana sandbox transfer')) {
      console.log("funding the tenants' Solana sandbox wallets…");
      targets.push({
        name: 'gateway Solana sandbox transfer',
        pid: gateway.pid,
        url: gatewayUrl,
        connections,
        request: await solanaTransferRequests(
          gatewayUrl,
          tenants.map((t) => t.key),
        ),
        gateway: true,
      });
    }
    const kept = targets.filter((t) => wanted(t.name));
    targets.length = 0;
    targets.push(...kept);

    const gatewayStats = async () =>
      (await (await fetch(`http://127.0.0.1:${gateway.ready.statsPort}/stats`)).json()) as {
        roundTrips: number;
        lags: number[];
        relayRuns: number;
        writingCommits: number;
        loopDelayMaxMs: number;
        longestHoldMs: number;
        gcMaxMs: number;
        gcTotalMs: number;
        /** Full collections since the last read: when each ended (epoch ms), its pause, the heap it left. */
        majorGcs: Array<{ endedAt: number; pauseMs: number; heapMiB: number }>;
      };
    const dbCounters = async () => {
      if (!stats) return { commits: 0, wal: 0n };
      await stats.query('select pg_stat_clear_snapshot()');
      const { rows } = await stats.query(
        `select xact_commit::text as commits, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as wal
         from pg_stat_database where datname = current_database()`,
      );
      return { commits: Number(rows[0].commits), wal: BigInt(rows[0].wal) };
    };

    const drive = async (target: Target, seconds: number) => {
      const result = await autocannon({
        url: target.url,
        connections: target.connections,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            setupRequest: (request: Record<string, unknown>) => {
              const next = target.request();
              return {
                ...request,
                path: next.path,
                headers: { ...(request['headers'] as object), ...next.headers },
                body: next.body,
              };
            },
          },
        ],
      } as unknown as autocannon.Options);
      return {
        requests: result.requests.total,
        ok: result['2xx'],
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.non2xx + result.timeouts,
      };
    };

    const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
    const lags: number[] = [];
    // The same lags by what ran while they were stamped, to tell which path makes the tail.
    const lagsByPath = new Map<string, number[]>();
    const noteLags = (path: string, batch: number[]) => {
      const list = lagsByPath.get(path) ?? [];
      for (const lag of batch) {
        lags.push(lag);
        list.push(lag);
      }
      lagsByPath.set(path, list);
    };
    const foreign = sampleForeignXids(stats);
    const foreignAges = foreign.ages;
    locks = await lockWaitSampler(url);
    for (const target of targets) {
      console.log(`warm-up ${rounds.warmupSeconds}s: ${target.name}`);
      await drive(target, rounds.warmupSeconds);
    }
    for (let round = 0; round < rounds.rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) {
        await gatewayStats();
        const before = {
          cpu: cpuMicros(target.pid),
          db: await dbCounters(),
          pg: stats ? await postgresCpu(stats) : new Map<number, number>(),
          machine: machineBusyMicros(),
        };
        locks?.take();
        const load = await drive(target, rounds.roundSeconds);
        const waits = locks?.take();
        const cpu = cpuMicros(target.pid) - before.cpu;
        const machine = machineBusyMicros() - before.machine;
        const pgCpu = stats ? postgresCpuBetween(before.pg, await postgresCpu(stats)) : 0;
        // Backends report their counters at most once a second.
        await sleep(1_100);
        const after = await dbCounters();
        const server = await gatewayStats();
        if (target.gateway) noteLags(target.name, server.lags);
        const n = Math.max(1, load.requests);
        const sample: Sample = {
          rps: load.ok / rounds.roundSeconds,
          p50: load.p50,
          p99: load.p99,
          cpu: cpu / n,
          pgCpu: pgCpu / n,
          machineCpu: machine / n,
          // The relay's own transactions (it polls while any target runs) are not the request's.
          commits: stats ? (after.commits - before.db.commits - server.relayRuns) / n : 0,
          wal: Number(after.wal - before.db.wal) / n,
          // A relay round is one message (RELAY_ROUND_TRIPS); it starts with `begin`, so the
          // writing-commit count never includes it.
          roundTrips: target.gateway
            ? (server.roundTrips - RELAY_ROUND_TRIPS * server.relayRuns) / n
            : ceilingRoundTrips(endpoints),
          writingCommits: target.gateway ? server.writingCommits / n : 1,
          loopMax: target.gateway ? server.loopDelayMaxMs : 0,
          hold: target.gateway ? server.longestHoldMs : 0,
          gcMax: target.gateway ? server.gcMaxMs : 0,
          gcShare: target.gateway ? server.gcTotalMs / (rounds.roundSeconds * 1000) : 0,
          busy: waits && waits.samples > 0 ? waits.active : Number.NaN,
          rowWaits: waits && waits.samples > 0 ? waits.rows : Number.NaN,
          errors: load.errors,
        };
        samples.get(target.name)!.push(sample);
        console.log(
          `round ${round + 1}/${rounds.rounds} ${target.name}: ${Math.round(sample.rps)} req/s, p50 ${sample.p50} ms, ` +
            `p99 ${sample.p99} ms, ${Math.round(sample.cpu)} µs CPU/req ` +
            `(PostgreSQL ${Math.round(sample.pgCpu)}, machine ${Math.round(sample.machineCpu)}), ${sample.writingCommits.toFixed(2)} writing commits/req, ` +
            `${sample.commits.toFixed(2)} commits/req, ` +
            `${Math.round(sample.wal)} WAL B/req, ${sample.roundTrips.toFixed(1)} round trips/req, ` +
            `event loop stalled up to ${Math.round(sample.loopMax)} ms ` +
            `(GC pauses up to ${Math.round(sample.gcMax)} ms, ${(sample.gcShare * 100).toFixed(1)} % of the round)` +
            (onPglite ? `, PGlite held up to ${Math.round(sample.hold)} ms` : '') +
            (waits && waits.samples > 0
              ? `, backends busy ${waits.active.toFixed(1)} (waiting on a row ${waits.rows.toFixed(2)}, an advisory lock ${waits.advisory.toFixed(2)}, another lock ${waits.other.toFixed(2)})`
              : '') +
            `, errors ${sample.errors}`,
        );
      }
    }

    const figures = new Map(
      targets.map((t) => {
        const rows = samples.get(t.name)!;
        const m = (f: (s: Sample) => number) => median(rows.map(f));
        return [
          t.name,
          {
            rps: Math.round(m((s) => s.rps)),
            p50: m((s) => s.p50),
            p99: m((s) => s.p99),
            cpu: Math.round(m((s) => s.cpu)),
            pgCpu: Math.round(m((s) => s.pgCpu)),
            machineCpu: Math.round(m((s) => s.machineCpu)),
            commits: m((s) => s.commits),
            wal: Math.round(m((s) => s.wal)),
            roundTrips: m((s) => s.roundTrips),
            writingCommits: m((s) => s.writingCommits),
            loopMax: Math.round(m((s) => s.loopMax)),
            hold: Math.round(m((s) => s.hold)),
            gcMax: Math.round(m((s) => s.gcMax)),
            busy: m((s) => s.busy),
            rowWaits: m((s) => s.rowWaits),
            errors: rows.reduce((sum, s) => sum + s.errors, 0),
          },
        ];
      }),
    );

    foreign.stop();
    // P2P at half its peak: the latency a partner sees when the gateway is not saturated.
    const p2p = targets.find((t) => t.name === 'gateway P2P transfer');
    const half = p2p ? Math.max(1, Math.round(figures.get(p2p.name)!.rps / 2)) : 0;
    const halfRounds: Array<{ p50: number; p99: number; errors: number; loopMax: number }> = [];
    // The saturated rounds above leave gigabytes of WAL that a server at half load would have
    // checkpointed long before: without this, the half-peak rounds measured that checkpoint debt (P2P
    // p99 164 ms after the full run, 39 ms with P2P alone). Its own WAL still checkpoints as it goes.
    if (p2p && stats)
      await stats
        .query('checkpoint')
        .catch((error: Error) => console.log(`checkpoint before the half-peak rounds skipped: ${error.message}`));
    // One unmeasured round at the same rate first, as every saturated target has its warm-up: right
    // after the checkpoint each page is written whole to the WAL on its first change, and
    // autovacuum works through what the saturated rounds left. Its latencies are printed, not
    // counted in the half-peak medians; its events' stamping lags are counted with all the others.
    let halfWarmup: { p50: number; p99: number; errors: number } | undefined;
    for (let round = p2p ? -1 : 0; p2p && round < rounds.rounds; round++) {
      noteLags('between rounds', (await gatewayStats()).lags);
      // Evenly spaced, timed from each request's due moment (autocannon's overallRate bursts each
      // connection's quota at the start of every second: see harness/paced.ts).
      const roundStart = new Date();
      const host = process.env.BENCH_TAIL
        ? startHostSampler({
            intervalMs: HOST_TICK_MS,
            groupOf: (pid, comm) =>
              pid === p2p.pid
                ? 'gateway'
                : pid === process.pid
                  ? 'load generator'
                  : comm.startsWith('postgres')
                    ? postgresProcessName(pid)
                    : undefined,
          })
        : undefined;
      const load = await pacedLoad({
        url: p2p.url,
        rate: half,
        seconds: rounds.roundSeconds,
        maxSockets: p2p.connections,
        request: () => ({ method: 'POST', ...p2p.request() }),
      });
      await sleep(200);
      const ticks = host?.stop() ?? [];
      const server = await gatewayStats();
      noteLags('P2P at half peak', server.lags);
      if (round < 0) {
        halfWarmup = load;
        console.log(
          `half-peak warm-up round (not counted): p50 ${load.p50} ms, p99 ${load.p99} ms, ` +
            `event loop stalled up to ${Math.round(server.loopDelayMaxMs)} ms (GC pauses up to ${Math.round(server.gcMaxMs)} ms), errors ${load.errors}`,
        );
        continue;
      }
      halfRounds.push({ ...load, loopMax: server.loopDelayMaxMs });
      if (process.env.BENCH_TAIL)
        console.log(
          `  round from ${roundStart.toISOString().slice(11, 23)}: slow answers (≥ 50 ms) by when they were due: ${slowClusters(load.answers)}; ` +
            `load generator stalled up to ${load.loadStallMs} ms (GC ${load.loadGcMs} ms)\n` +
            hostDuringSlowRuns(load, ticks, server.majorGcs),
        );
      console.log(
        `half-peak round ${round + 1}/${rounds.rounds}: p50 ${load.p50} ms, p99 ${load.p99} ms, ` +
          `event loop stalled up to ${Math.round(server.loopDelayMaxMs)} ms (GC pauses up to ${Math.round(server.gcMaxMs)} ms), errors ${load.errors}`,
      );
    }
    const halfLoad = {
      // A median of two rounds is their mean: kept to a tenth of a millisecond, as the rounds print.
      p50: Math.round(median(halfRounds.map((r) => r.p50)) * 10) / 10,
      p99: Math.round(median(halfRounds.map((r) => r.p99)) * 10) / 10,
      loopMax: Math.round(median(halfRounds.map((r) => r.loopMax))),
      errors: halfRounds.reduce((sum, r) => sum + r.errors, 0),
    };

    const rows = targets.map((t) => {
      const f = figures.get(t.name)!;
      const peer = t.peer && figures.has(t.peer) ? figures.get(t.peer) : undefined;
      const ratio = peer ? `${(f.rps / peer.rps).toFixed(2)}× ${t.peer}` : '';
      const db = onPglite ? 'n/a | n/a' : `${f.commits.toFixed(2)} | ${f.wal}`;
      const stalls = t.gateway ? `${f.loopMax} / ${f.gcMax}${onPglite ? ` / ${f.hold}` : ''}` : '';
      const waits = onPglite || Number.isNaN(f.busy) ? 'n/a' : `${f.busy.toFixed(1)} / ${f.rowWaits.toFixed(2)}`;
      return `| ${t.name} | ${f.rps} | ${f.p50} | ${f.p99} | ${f.cpu} | ${onPglite ? 'n/a' : f.pgCpu} | ${f.machineCpu} | ${f.writingCommits.toFixed(2)} | ${db} | ${f.roundTrips.toFixed(1)} | ${waits} | ${stalls} | ${ratio} | ${f.errors} |`;
    });
    console.log(`\n${machineLine()}`);
    if (endpoints === 0) console.log('no webhook endpoints: events write no deliveries and no delivery jobs');
    console.log(
      `${rounds.note}; c=${connections} (hot paths c=${onPglite ? connections : 32}); ${onPglite ? 'PGlite in memory' : 'PostgreSQL'}\n`,
    );
    console.log(
      `| path | req/s | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | machine busy CPU µs/req | writing commits/req | all commits/req | WAL B/req | round trips/req | PostgreSQL backends busy / waiting on a row (mean) | max ms: event-loop stall / GC pause${onPglite ? ' / PGlite hold' : ''} | ratio (req/s) | errors |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    if (p2p)
      console.log(
        `\nP2P at half peak (${half} req/s offered, evenly paced, medians of ${rounds.rounds}): p50 ${halfLoad.p50} ms, p99 ${halfLoad.p99} ms, ` +
          `max event-loop stall ${halfLoad.loopMax} ms, errors ${halfLoad.errors}` +
          (halfWarmup
            ? `; its warm-up round after the checkpoint, not counted: p50 ${halfWarmup.p50} ms, p99 ${halfWarmup.p99} ms, errors ${halfWarmup.errors}`
            : ''),
      );
    console.log(
      `stamping lag (event written → seq stamped, ${lags.length} events): p50 ${Math.round(percentile(lags, 50))} ms, ` +
        `p99 ${Math.round(percentile(lags, 99))} ms, max ${Math.round(maximum(lags))} ms; p99 by what ran: ` +
        [...lagsByPath]
          .filter(([, list]) => list.length > 0)
          .map(([path, list]) => `${path} ${Math.round(percentile(list, 99))} ms`)
          .join(', '),
    );
    if (foreignAges.length > 0)
      console.log(
        `oldest open transaction of other databases holding a transaction id (sampled every 100 ms): ` +
          `p50 ${Math.round(percentile(foreignAges, 50))} ms, p99 ${Math.round(percentile(foreignAges, 99))} ms`,
      );
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await locks?.stop();
    await stats?.end();
    if (admin) {
      // BENCH_KEEP_DB=1 keeps the database for reading its plans and statistics afterwards.
      if (process.env.BENCH_KEEP_DB) console.log(`kept database ${dbName}`);
      else await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
      await admin.end();
    }
  }
});

/**
 * The host around each slow run (from 100 ms before its first slow answer was due to when its
 * last one was answered) beside the whole round: whether something outside the bench took the
 * CPU, or steal time rose, when the answers slowed.
 */
function hostDuringSlowRuns(
  load: PacedLoad,
  ticks: readonly HostTick[],
  majorGcs: ReadonlyArray<{ endedAt: number; pauseMs: number; heapMiB: number }>,
): string {
  // The gateway's full collections on this process's clock (both read the same wall clock).
  const collections = majorGcs.map((gc) => ({ ...gc, at: gc.endedAt - performance.timeOrigin }));
  const describeGcs = (from: number, to: number) => {
    const inside = collections.filter((gc) => gc.at >= from && gc.at <= to);
    return inside.length === 0
      ? 'no full collection of the gateway'
      : `gateway's full collection ended at ${inside
          .map(
            (gc) =>
              `${((gc.at - load.startedAt) / 1000).toFixed(2)}s (pause ${Math.round(gc.pauseMs)} ms, heap ${Math.round(gc.heapMiB)} MiB)`,
          )
          .join(', ')}`;
  };
  const round = `    whole round: ${describeHost(ticks, load.startedAt, load.startedAt + 1e9)}; ${describeGcs(load.startedAt, load.startedAt + 1e9)}`;
  const runs = slowRuns(load.answers).runs.filter((r) => r.count >= 5);
  return [
    round,
    ...runs.map((r) => {
      const from = load.startedAt + r.from - 100;
      const to = load.startedAt + r.to + r.worst;
      return `    ${(r.from / 1000).toFixed(2)}s ×${r.count}: ${describeHost(ticks, from, to)}; ${describeGcs(from, to)}`;
    }),
  ].join('\n');
}

interface SlowRun {
  from: number;
  to: number;
  count: number;
  worst: number;
}

/** The answers of 50 ms or more, grouped into runs of answers due within 100 ms of each other. */
function slowRuns(answers: Array<{ dueMs: number; latencyMs: number }>): { slow: number; runs: SlowRun[] } {
  const slow = answers.filter((a) => a.latencyMs >= 50).sort((a, b) => a.dueMs - b.dueMs);
  const runs: SlowRun[] = [];
  for (const a of slow) {
    const last = runs.at(-1);
    if (last && a.dueMs - last.to <= 100) {
      last.to = a.dueMs;
      last.count++;
      last.worst = Math.max(last.worst, a.latencyMs);
    } else runs.push({ from: a.dueMs, to: a.dueMs, count: 1, worst: a.latencyMs });
  }
  return { slow: slow.length, runs };
}

/**
 * Where a round's slow answers fall in time (BENCH_TAIL=1): due moments of answers that took 50 ms or
 * more, grouped into runs no more than 100 ms apart, each as start s, count and worst latency. A few
 * dense runs are stalls (a pause that holds every request due meanwhile); scattered ones are not.
 */
function slowClusters(answers: Array<{ dueMs: number; latencyMs: number }>): string {
  const { slow, runs } = slowRuns(answers);
  if (runs.length === 0) return 'none';
  return `${slow} of ${answers.length} in ${runs.length} runs: ${runs
    .map((r) => `${(r.from / 1000).toFixed(2)}s ×${r.count} ≤${Math.round(r.worst)}ms`)
    .join(', ')}`;
}

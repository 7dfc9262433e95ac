/**
 * `npm run bench:money`: the money paths beside ceilings the gateway cannot flatter itself against,
 * in one run on one database (a fresh one, dropped after), warm-up, interleaved rounds, medians.
 *
 * Rows on PostgreSQL:
 * - `commit ceiling` (money-reference.ts): one one-row insert per transaction at c=16: what this
 *   machine's PostgreSQL can commit at all.
 * - `reference ceiling, P2P` (money-reference.ts): a transfer written once as the best bare-pg SQL we
 *   know, ONE statement (both rows locked in id order, the guarded debit and credit, the posting, two
 *   entries, two wallet-transaction rows, the idempotency row, two event rows) against tables of its
 *   own, importing nothing from src/: a yardstick no gateway refactor moves.
 * - `exact writes, …` (money-exact.ts): the gateway's OWN statements, imported from src/, sent from a
 *   bare `pg` pool in a plain node:http server to the gateway's database (its schema, indexes, tenants
 *   and webhook endpoints): P2P, the hot wallet, and airtime, deposit and payout, each two-phase path as
 *   its statements around a no-op provider. A statement the gateway changes changes this ceiling too.
 * - `gateway …` (money-server.ts): the app through REST, a unique Idempotency-Key per request, 100
 *   funded tenants with one enabled webhook endpoint each: P2P, the hot wallet (one treasury sender),
 *   airtime, bank-transfer deposits, payouts, Solana sandbox transfers, and EVM sandbox swaps
 *   (money-evm-swap.ts: USDC → USDT on `base`, the wallets funded from the faucet first; the swap
 *   alone is timed, its fresh quote asked for just before by the same connection, untimed, so req/s
 *   is swaps with their quotes in the loop and the CPU, commit and WAL figures include the quote's;
 *   a swap counts only when answered 2xx and confirmed).
 * - `bare-pg 15 statements, …` (money-ceiling.ts): the gateway's P2P writes as a transaction of 15
 *   separate statements holding both row locks across them; it was once called "the ceiling", but it
 *   compared another design.
 *
 * Distinct pairs: each connection has its own group of tenants (money-slots.ts), so no two requests
 * in flight share a wallet, in the gateway's rows and every peer's alike (c=16; the hot rows c=32,
 * every request from the treasury, their recipients distinct).
 *
 * Per row: req/s, p50/p99; server CPU µs per request, the whole server process's CPU from the round's
 * start until the relay has stamped every event of the round (waited for after the load, at most
 * `--drain-ms`, the wait printed per row), divided by requests, so work moved to the background
 * still counts; PostgreSQL's CPU (the bench database's backends and the WAL writer, checkpointer and
 * background writer) and the whole machine's busy CPU (/proc/stat: on two cores that is the budget,
 * wherever the cost lands) over the same span; writing commits and round trips per request counted in
 * each server alike (statement-counter.ts: the gateway's relay left out); all commits per request from
 * pg_stat_database (read after every server's idle sessions were made to report, stats-flush.ts;
 * the relay's transactions and the bench's own sampling statements left out) and
 * WAL bytes per request from pg_current_wal_lsn (cluster-wide: other databases' writes count too);
 * each row's req/s as a ratio to its peers: a gateway row to its exact-writes row (P2P also to the
 * reference ceiling; airtime and deposits also to gateway P2P), an exact-writes P2P row to the
 * reference ceiling, the reference ceiling to the commit ceiling. Also: commit → seq stamping lag
 * from the relay; what makes a latency tail, per round: the gateway's longest event-loop stall, its
 * longest GC pause and, on PGlite, the longest hold of its one connection; P2P p50/p99 at half its
 * peak rate after the rounds (a checkpoint, one warm-up round at that rate, then medians of as many
 * rounds; distinct pairs there too, lent per request). `--pglite`: the gateway rows on PGlite, c=16;
 * the ceilings need PostgreSQL and are skipped (the output says so).
 *
 * `--only <regex>` keeps the rows whose name matches (e.g. `--only 'P2P|airtime|deposit'`, or
 * `--only EVM` for the swap row alone), for a short run of the paths in question; a ratio is printed
 * only when its peer ran too.
 *
 *   npm run bench:money -- [--pglite] [--connections 16] [--warmup 5 --round 10 --rounds 3] [--only <regex>] [--endpoints 1] [--drain-ms 10000]
 *
 * `BENCH_KEEP_DB=1` keeps the bench database afterwards (its name is printed), to read its plans and
 * statistics. `BENCH_TAIL=1` prints, per half-peak round, when its answers of 50 ms or more were due
 * (grouped into runs), the load generator's own longest stall and, for the round and each run of
 * five or more slow answers, what the host did meanwhile (busy, steal, iowait, page-cache refaults,
 * major faults, CPU by process, processes started: harness/host-sampler.ts) and whether the
 * gateway finished a full garbage collection then.
 *
 * Every server runs as `npm start` runs the gateway, bundled from dist/ (harness `compiledServer`,
 * all of them in one bundle: money-servers.ts), not through tsx, whose per-module source maps and
 * transform caches made its heap larger and its full collections longer (see docs/benchmarks.md,
 * "The half-peak tail"). `BENCH_TSX=1` runs them through tsx.
 */
import { benchArgs } from './harness/options.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { RELAY_ROUND_TRIPS } from '../../src/domain/events/relay.js';
import {
  type ClosedRequest,
  closedLoad,
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
import { groupsOf, oneOf, pairOf, slotLender } from './money-slots.js';
import { solanaTransferRequests } from './money-solana.js';
import { evmSwapRequests } from './money-evm-swap.js';

/** How often the host is sampled during a half-peak round with `BENCH_TAIL`. */
const HOST_TICK_MS = 50;
/** Connections of the hot-wallet rows (one sender: the gateway coalesces its transfers). */
const HOT_CONNECTIONS = 32;
/** Wallet pairs lent to the half-peak rounds' requests (open loop: not tied to a connection). */
const HALF_PEAK_PAIRS = 50;

interface Tenant {
  id: string;
  key: string;
  keyId: string;
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
  /**
   * Path, headers and body of a request of connection `slot` (0 … connections - 1), from that
   * connection's own wallets; a fresh Idempotency-Key every time for the gateway. Or, for a request
   * that needs an answer first (the EVM swap its quote), `prepare` giving it after that untimed step
   * and `counts` saying whether its answer counts (harness/closed.ts).
   */
  request: ((slot: number) => { path: string; headers: Record<string, string>; body: string }) | Prepared;
  /** Rows whose req/s this row's is shown as a ratio of. */
  peers: string[];
  gateway: boolean;
  /** A peer's own counts since the last call (the gateway's come from its stats port). */
  stats?: (flush: boolean) => Promise<{ roundTrips: number; writingCommits: number; flushed: number }>;
}

/** A request built after an untimed step of its own, driven in a closed loop (harness/closed.ts). */
interface Prepared {
  prepare: (slot: number) => Promise<ClosedRequest>;
  counts: (status: number, body: string) => boolean;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU µs per request, from the round's start until the relay drained. */
  cpu: number;
  /** PostgreSQL CPU µs per request: the bench database's backends plus WAL writer, checkpointer, bgwriter. */
  pgCpu: number;
  /** Whole-machine busy CPU µs per request (/proc/stat): gateway, PostgreSQL, load generator, neighbours. */
  machineCpu: number;
  commits: number;
  wal: number;
  roundTrips: number;
  /** Commits of transactions or statements that wrote, counted in the server (the relay's left out). */
  writingCommits: number;
  /** From the end of the load until no committed event waited for its seq; NaN when not within the bound. */
  drainMs: number;
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

const { values } = benchArgs({
  options: {
    ...roundFlags,
    pglite: { type: 'boolean', default: false },
    connections: { type: 'string', default: '16' },
    only: { type: 'string' },
    endpoints: { type: 'string', default: '1' },
    'drain-ms': { type: 'string', default: '10000' },
  },
});

await onLoadCore(async () => {
  const rounds = roundOptions(values);
  const connections = Number(values.connections);
  const onPglite = values.pglite === true;
  const drainLimitMs = Number(values['drain-ms']);
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
  // Statements the bench itself sends to the bench database (each one a transaction that
  // pg_stat_database counts as a commit): left out of every row's commits.
  let ownStatements = 0;
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
      const query = stats.query.bind(stats) as (...args: unknown[]) => unknown;
      (stats as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        ownStatements++;
        return query(...args);
      };
    }
    // The gateway as production runs it: NODE_ENV=production, its default log level (info) with
    // every log line written (to the harness's pipe, drained unread), auth, metrics and the rate
    // limiter on (its per-key limit set out of reach, so no request is refused: the work of
    // counting is measured, not a refusal).
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...(url ? { DATABASE_URL: url } : { DATABASE_URL: '' }),
      NODE_ENV: 'production',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      // Production has no development key for sandbox custodial wallets (the Solana rows use them).
      SOLANA_MASTER_KEYS_SANDBOX: `1:${randomBytes(32).toString('base64')}`,
      BENCH_LOG: '1',
      BENCH_ENDPOINTS: String(endpoints),
    };
    delete env.LOG_LEVEL;
    // One bundle for every server (money-servers.ts), BENCH_SERVER naming which.
    const serverScript = await compiledServer('scripts/bench/money-servers.ts');
    const start = <Ready extends { pid: number }>(server: string, args: string[], timeoutMs?: number) =>
      startServer<Ready>(serverScript, args, { ...env, BENCH_SERVER: server }, timeoutMs);
    console.log(`starting the gateway on ${onPglite ? 'PGlite' : `PostgreSQL ${dbName}`} (seeding 100 tenants)…`);
    const gateway = await start<GatewayReady>('gateway', [], 600_000);
    servers.push(gateway);
    const { tenants, treasury } = gateway.ready;
    const gatewayUrl = `http://127.0.0.1:${gateway.ready.port}`;
    const ids = tenants.map((t) => t.id);
    // Each connection's own wallets: no two requests in flight share one (money-slots.ts).
    const pairGroups = groupsOf(tenants, connections, 2);
    const ownerGroups = groupsOf(tenants, connections, 1);
    const hotGroups = groupsOf(tenants, HOT_CONNECTIONS, 1);
    const post = (key: string, path: string, body: unknown) => ({
      path,
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': randomUUID() },
      body: JSON.stringify(body),
    });
    const plain = (path: string, body: unknown) => ({
      path,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const peerStats = (peerUrl: string) => async (flush: boolean) =>
      (await (await fetch(`${peerUrl}/stats${flush ? '' : '?flush=0'}`)).json()) as {
        roundTrips: number;
        writingCommits: number;
        flushed: number;
      };
    const gatewayP2p = (from: Tenant, to: Tenant) =>
      post(from.key, '/api/v1/wallet/transfer', { amount: 1, recipient: to.id });
    const targets: Target[] = [];
    const skipped: string[] = [];
    const names = {
      commit: 'commit ceiling',
      reference: 'reference ceiling, P2P',
      exactP2p: 'exact writes, P2P',
      exactHot: 'exact writes, hot wallet',
      exactAirtime: 'exact writes, airtime',
      exactDeposit: 'exact writes, deposit',
      exactPayout: 'exact writes, payout',
      statementsP2p: 'bare-pg 15 statements, P2P',
      statementsHot: 'bare-pg 15 statements, hot sender',
      p2p: 'gateway P2P transfer',
      hot: 'gateway hot-wallet transfer',
      airtime: 'gateway airtime, 100 tenants',
      deposit: 'gateway deposit, 100 tenants',
      payout: 'gateway payout, 100 tenants',
      solana: 'gateway Solana sandbox transfer',
      evmSwap: 'gateway EVM sandbox swap',
    };
    const peerOnly = [
      names.commit,
      names.reference,
      names.exactP2p,
      names.exactHot,
      names.exactAirtime,
      names.exactDeposit,
      names.exactPayout,
      names.statementsP2p,
      names.statementsHot,
    ];
    if (onPglite) skipped.push(...peerOnly.filter(wanted));
    if (!onPglite && (wanted(names.commit) || wanted(names.reference))) {
      const reference = await start<{ pid: number; port: number }>('reference', [JSON.stringify(ids)]);
      servers.push(reference);
      const referenceUrl = `http://127.0.0.1:${reference.ready.port}`;
      const stats = peerStats(referenceUrl);
      targets.push(
        {
          name: names.commit,
          pid: reference.pid,
          url: referenceUrl,
          connections,
          request: () => plain('/commit', {}),
          peers: [],
          gateway: false,
          stats,
        },
        {
          name: names.reference,
          pid: reference.pid,
          url: referenceUrl,
          connections,
          request: (slot) => {
            const [from, to] = pairOf(pairGroups[slot]!);
            return plain('/p2p', { from: from.id, to: to.id });
          },
          peers: [names.commit],
          gateway: false,
          stats,
        },
      );
    }
    const exactRows = [names.exactP2p, names.exactHot, names.exactAirtime, names.exactDeposit, names.exactPayout];
    if (!onPglite && exactRows.some(wanted)) {
      const exact = await start<{ pid: number; port: number }>('exact', [
        JSON.stringify({
          tenants: tenants.map(({ id, keyId }) => ({ id, keyId })),
          treasury: { id: treasury.id, keyId: treasury.keyId },
        }),
      ]);
      servers.push(exact);
      const exactUrl = `http://127.0.0.1:${exact.ready.port}`;
      const stats = peerStats(exactUrl);
      const row = (name: string, request: Target['request'], peers: string[], many = connections): Target => ({
        name,
        pid: exact.pid,
        url: exactUrl,
        connections: many,
        request,
        peers,
        gateway: false,
        stats,
      });
      targets.push(
        row(
          names.exactP2p,
          (slot) => {
            const [from, to] = pairOf(pairGroups[slot]!);
            return plain('/p2p', { from: from.id, to: to.id });
          },
          [names.reference],
        ),
        row(names.exactHot, (slot) => plain('/hot', { to: oneOf(hotGroups[slot]!).id }), [], HOT_CONNECTIONS),
        row(names.exactAirtime, (slot) => plain('/airtime', { owner: oneOf(ownerGroups[slot]!).id }), []),
        row(names.exactDeposit, (slot) => plain('/deposit', { owner: oneOf(ownerGroups[slot]!).id }), []),
        row(names.exactPayout, (slot) => plain('/payout', { owner: oneOf(ownerGroups[slot]!).id }), []),
      );
    }
    if (!onPglite && (wanted(names.statementsP2p) || wanted(names.statementsHot))) {
      const statements = await start<{ pid: number; port: number }>('statements', [
        JSON.stringify({ tenants: tenants.map(({ id }) => ({ id })), treasury: { id: treasury.id } }),
      ]);
      servers.push(statements);
      const statementsUrl = `http://127.0.0.1:${statements.ready.port}`;
      const stats = peerStats(statementsUrl);
      targets.push(
        {
          name: names.statementsP2p,
          pid: statements.pid,
          url: statementsUrl,
          connections,
          request: (slot) => {
            const [from, to] = pairOf(pairGroups[slot]!);
            return plain('/p2p', { from: from.id, to: to.id });
          },
          peers: [],
          gateway: false,
          stats,
        },
        {
          name: names.statementsHot,
          pid: statements.pid,
          url: statementsUrl,
          connections: HOT_CONNECTIONS,
          request: (slot) => plain('/hot', { to: oneOf(hotGroups[slot]!).id }),
          peers: [],
          gateway: false,
          stats,
        },
      );
    }
    const onGateway = (name: string, request: Target['request'], peers: string[], many = connections): Target => ({
      name,
      pid: gateway.pid,
      url: gatewayUrl,
      connections: many,
      request,
      peers,
      gateway: true,
    });
    targets.push(
      onGateway(
        names.p2p,
        (slot) => {
          const [from, to] = pairOf(pairGroups[slot]!);
          return gatewayP2p(from, to);
        },
        [names.exactP2p, names.reference],
      ),
      onGateway(
        names.hot,
        (slot) => gatewayP2p(treasury, oneOf(hotGroups[slot]!)),
        [names.exactHot],
        onPglite ? connections : HOT_CONNECTIONS,
      ),
      onGateway(
        names.airtime,
        (slot) =>
          post(oneOf(ownerGroups[slot]!).key, '/api/v1/bills/buy-airtime', {
            phoneNumber: '08031234567',
            biller: 'mtn',
            amount: 100,
          }),
        [names.exactAirtime, names.p2p],
      ),
      onGateway(
        names.deposit,
        (slot) => post(oneOf(ownerGroups[slot]!).key, '/api/v1/wallet/deposits/bank-transfer', { amount: 100 }),
        [names.exactDeposit, names.p2p],
      ),
      onGateway(
        names.payout,
        (slot) =>
          post(oneOf(ownerGroups[slot]!).key, '/api/v1/wallet/withdraw', {
            amount: 100,
            bankCode: '044',
            accountNumber: '0690000040',
          }),
        [names.exactPayout],
      ),
    );
    if (wanted(names.solana)) {
      console.log("funding the tenants' Solana sandbox wallets…");
      const solana = await solanaTransferRequests(
        gatewayUrl,
        tenants.map((t) => t.key),
      );
      targets.push(onGateway(names.solana, () => solana(), []));
    }
    if (wanted(names.evmSwap)) {
      console.log("funding the tenants' EVM sandbox wallets on base (ETH for gas, USDC to sell)…");
      const swaps = await evmSwapRequests(
        gatewayUrl,
        tenants.map((t) => t.key),
      );
      targets.push(
        onGateway(
          names.evmSwap,
          { prepare: (slot) => swaps.prepare(oneOf(ownerGroups[slot]!).key), counts: swaps.counts },
          [],
        ),
      );
    }
    const kept = targets.filter((t) => wanted(t.name));
    targets.length = 0;
    targets.push(...kept);
    if (skipped.length > 0) console.log(`PGlite: skipped, as they need PostgreSQL: ${skipped.join('; ')}`);

    // `flush = false`: counts only, without making the sessions report (stats-flush.ts), as at the
    // start of a round, too soon after the last flush for it to take effect at once.
    const gatewayStats = async (flush = true) =>
      (await (await fetch(`http://127.0.0.1:${gateway.ready.statsPort}/stats${flush ? '' : '?flush=0'}`)).json()) as {
        roundTrips: number;
        /** Statements its stats call sent to make its idle sessions report their counters. */
        flushed: number;
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
      if (!stats) return { commits: 0, wal: 0n, own: 0 };
      await stats.query('select pg_stat_clear_snapshot()');
      const { rows } = await stats.query(
        `select xact_commit::text as commits, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as wal
         from pg_stat_database where datname = current_database()`,
      );
      return { commits: Number(rows[0].commits), wal: BigInt(rows[0].wal), own: ownStatements };
    };
    // Whether committed events still wait for their seq: asked of the database directly, or on
    // PGlite (one connection, inside the gateway) of the gateway.
    const unstamped = async (): Promise<boolean> => {
      if (stats) return (await stats.query('select exists (select 1 from events where seq is null) as w')).rows[0].w;
      const answer = (await (await fetch(`http://127.0.0.1:${gateway.ready.statsPort}/unstamped`)).json()) as {
        waiting: boolean;
      };
      return answer.waiting;
    };
    /** Waits until the relay has stamped every committed event, at most `drainLimitMs`: how long it took, NaN if longer. */
    const drainRelay = async (): Promise<number> => {
      const started = performance.now();
      // Requests still in flight when the load stopped commit within a few milliseconds.
      await sleep(50);
      while (await unstamped()) {
        if (performance.now() - started > drainLimitMs) return Number.NaN;
        await sleep(10);
      }
      return performance.now() - started;
    };

    const drive = async (target: Target, seconds: number) => {
      const build = target.request;
      if (typeof build !== 'function')
        return closedLoad({ url: target.url, connections: target.connections, seconds, ...build });
      let nextSlot = 0;
      const requestOf = (slot: number) => ({
        method: 'POST',
        setupRequest: (request: Record<string, unknown>) => {
          const next = build(slot);
          return {
            ...request,
            path: next.path,
            headers: { ...(request['headers'] as object), ...next.headers },
            body: next.body,
          };
        },
      });
      const result = await autocannon({
        url: target.url,
        connections: target.connections,
        duration: seconds,
        // Each connection (one request at a time) gets a slot of its own: its own wallets.
        setupClient: (client: { setRequests(requests: unknown[]): void }) => {
          client.setRequests([requestOf(nextSlot++ % target.connections)]);
        },
        requests: [requestOf(0)],
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
      await drainRelay();
    }
    // The warm-ups' last counters reported before the first round's are read (stats-flush.ts).
    await sleep(1_100);
    await gatewayStats();
    for (const peerStats of new Set(targets.map((t) => t.stats))) await peerStats?.(true);
    for (let round = 0; round < rounds.rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) {
        await gatewayStats(false);
        await target.stats?.(false);
        const before = {
          cpu: cpuMicros(target.pid),
          db: await dbCounters(),
          pg: stats ? await postgresCpu(stats) : new Map<number, number>(),
          machine: machineBusyMicros(),
        };
        locks?.take();
        const load = await drive(target, rounds.roundSeconds);
        // The relay's stamping of this round's events is this round's work: the CPU is read once
        // it is done, so a path that leaves work to the background is charged for it.
        const drainMs = await drainRelay();
        const waits = locks?.take();
        const cpu = cpuMicros(target.pid) - before.cpu;
        const machine = machineBusyMicros() - before.machine;
        const pgCpu = stats ? postgresCpuBetween(before.pg, await postgresCpu(stats)) : 0;
        // A backend reports its counters when it goes idle, at most once a second (else 10 s later):
        // a second on, the servers' stats calls make each idle session report (stats-flush.ts).
        await sleep(1_100);
        const server = await gatewayStats();
        const own = target.gateway ? server : await target.stats!(true);
        const after = await dbCounters();
        if (target.gateway) noteLags(target.name, server.lags);
        const n = Math.max(1, load.requests);
        // Transactions that are not the requests': the relay's (it polls while any target runs), the
        // servers' flushing statements and the bench's own sampling of the database (lock waits,
        // foreign transactions, counters, the relay's drain).
        const notRequests =
          server.relayRuns +
          server.flushed +
          (target.gateway ? 0 : own.flushed) +
          (after.own - before.db.own) +
          (waits?.samples ?? 0);
        const sample: Sample = {
          rps: load.ok / rounds.roundSeconds,
          p50: load.p50,
          p99: load.p99,
          cpu: cpu / n,
          pgCpu: pgCpu / n,
          machineCpu: machine / n,
          commits: stats ? (after.commits - before.db.commits - notRequests) / n : 0,
          wal: Number(after.wal - before.db.wal) / n,
          // A relay round is one message (RELAY_ROUND_TRIPS); it starts with `begin`, so the
          // writing-commit count never includes it.
          roundTrips: (own.roundTrips - (target.gateway ? RELAY_ROUND_TRIPS * server.relayRuns : 0)) / n,
          writingCommits: own.writingCommits / n,
          drainMs,
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
            `relay drained ${Number.isNaN(drainMs) ? `NOT within ${drainLimitMs}` : Math.round(drainMs)} ms after the load, ` +
            (target.gateway
              ? `event loop stalled up to ${Math.round(sample.loopMax)} ms ` +
                `(GC pauses up to ${Math.round(sample.gcMax)} ms, ${(sample.gcShare * 100).toFixed(1)} % of the round)` +
                (onPglite ? `, PGlite held up to ${Math.round(sample.hold)} ms` : '') +
                ', '
              : '') +
            (waits && waits.samples > 0
              ? `backends busy ${waits.active.toFixed(1)} (waiting on a row ${waits.rows.toFixed(2)}, an advisory lock ${waits.advisory.toFixed(2)}, another lock ${waits.other.toFixed(2)}), `
              : '') +
            `errors ${sample.errors}`,
        );
      }
    }

    const figures = new Map(
      targets.map((t) => {
        const rows = samples.get(t.name)!;
        const m = (f: (s: Sample) => number) => median(rows.map(f));
        const drains = rows.map((s) => s.drainMs);
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
            // The longest wait of any round; a round whose relay did not drain within the bound says so.
            drain: drains.some(Number.isNaN) ? `> ${drainLimitMs}` : String(Math.round(maximum(drains))),
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
    const p2p = targets.find((t) => t.name === names.p2p);
    const half = p2p ? Math.max(1, Math.round(figures.get(p2p.name)!.rps / 2)) : 0;
    const halfRounds: Array<{ p50: number; p99: number; errors: number; loopMax: number }> = [];
    // Open loop: a request is not tied to a connection, so each borrows a pair of wallets for as long
    // as it is in flight (distinct pairs here too).
    const halfPairs = groupsOf(tenants, HALF_PEAK_PAIRS, 2);
    const lender = slotLender(HALF_PEAK_PAIRS);
    const halfPeakRequest = () => {
      const slot = lender.take();
      const [from, to] = pairOf(halfPairs[slot]!);
      return { method: 'POST', ...gatewayP2p(from, to), onAnswered: () => lender.give(slot) };
    };
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
        request: halfPeakRequest,
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
      const ratio = t.peers
        .filter((peer) => figures.has(peer))
        .map((peer) => `${(f.rps / figures.get(peer)!.rps).toFixed(2)}× ${peer}`)
        .join('; ');
      const db = onPglite ? 'n/a | n/a' : `${f.commits.toFixed(2)} | ${f.wal}`;
      const stalls = t.gateway ? `${f.loopMax} / ${f.gcMax}${onPglite ? ` / ${f.hold}` : ''}` : '';
      const waits = onPglite || Number.isNaN(f.busy) ? 'n/a' : `${f.busy.toFixed(1)} / ${f.rowWaits.toFixed(2)}`;
      return `| ${t.name} | ${f.rps} | ${f.p50} | ${f.p99} | ${f.cpu} | ${onPglite ? 'n/a' : f.pgCpu} | ${f.machineCpu} | ${f.writingCommits.toFixed(2)} | ${db} | ${f.roundTrips.toFixed(1)} | ${f.drain} | ${waits} | ${stalls} | ${ratio} | ${f.errors} |`;
    });
    console.log(`\n${machineLine()}`);
    if (endpoints === 0) console.log('no webhook endpoints: events write no deliveries and no delivery jobs');
    if (skipped.length > 0) console.log(`PGlite: skipped, as they need PostgreSQL: ${skipped.join('; ')}`);
    console.log(
      `${rounds.note}; c=${connections} (hot paths c=${onPglite ? connections : HOT_CONNECTIONS}), no two requests in flight sharing a wallet; ` +
        `${onPglite ? 'PGlite in memory' : 'PostgreSQL'}; server CPU counted until the relay drained (at most ${drainLimitMs} ms after the load)\n`,
    );
    console.log(
      `| path | req/s | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | machine busy CPU µs/req | writing commits/req | all commits/req | WAL B/req | round trips/req | relay drained after, ms (max) | PostgreSQL backends busy / waiting on a row (mean) | max ms: event-loop stall / GC pause${onPglite ? ' / PGlite hold' : ''} | ratio (req/s) | errors |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    if (p2p)
      console.log(
        `\nP2P at half peak (${half} req/s offered, evenly paced, medians of ${rounds.rounds}): p50 ${halfLoad.p50} ms, p99 ${halfLoad.p99} ms, ` +
          `max event-loop stall ${halfLoad.loopMax} ms, errors ${halfLoad.errors}` +
          (halfWarmup
            ? `; its warm-up round after the checkpoint, not counted: p50 ${halfWarmup.p50} ms, p99 ${halfWarmup.p99} ms, errors ${halfWarmup.errors}`
            : '') +
          (lender.shared() > 0
            ? `; ${lender.shared()} requests started with all ${HALF_PEAK_PAIRS} wallet pairs in flight, and shared one`
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

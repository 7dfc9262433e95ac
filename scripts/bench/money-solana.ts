/**
 * Solana sandbox transfers through REST, each with its own Idempotency-Key.
 *
 *   npx tsx scripts/bench/money-solana.ts [--db pglite|postgres] [--seconds 15] [--concurrency 16] [--tenants 16]
 *
 * Run alone it starts the gateway (scripts/bench/tenants-server.ts, on CPU 0; the load on CPU 1),
 * funds one wallet per tenant from the faucet, warms up, and reports transfers per second,
 * p50/p99, the server's CPU per transfer from /proc and, on PostgreSQL, commits and inserted rows
 * per request (over the whole run, warm-up and funding included, read after the server exits so
 * every backend has flushed its counters). `runSolanaTransfers` is the load alone, for the money
 * bench to call against a server of its own.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Keypair } from '@solana/web3.js';
import pg from 'pg';
import { benchDatabase } from './database.js';
import { onLoadCore, spawnServer } from './pinning.js';
import { cpuMicros } from './proc.js';

export interface SolanaTransferLoad {
  baseUrl: string;
  /** Sandbox keys with TRANSACT; worker i sends from the wallet of key i mod n. */
  apiKeys: string[];
  concurrency: number;
  seconds: number;
  network?: 'devnet' | 'testnet' | 'mainnet-beta';
  /** Fund each key's wallet from the faucet first (100 SOL); default true. */
  fund?: boolean;
}

export interface SolanaTransferResult {
  /** Transfers answered 2xx and confirmed. */
  count: number;
  /** Anything else (non-2xx, not confirmed, network errors). */
  errors: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  /** Measured wall time, seconds. */
  elapsed: number;
}

async function post(baseUrl: string, key: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json().catch(() => undefined) };
}

/** Funds each key's custodial wallet with 100 SOL from the sandbox faucet, eight at a time. */
export async function fundSolanaWallets(baseUrl: string, apiKeys: string[], network = 'devnet'): Promise<void> {
  const queue = [...apiKeys];
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        const { status, json } = await post(baseUrl, key, '/api/v1/solana/sandbox/faucet', {
          network,
          asset: 'SOL',
          amount: '100',
        });
        if (status >= 300) throw new Error(`faucet answered ${status}: ${JSON.stringify(json)}`);
      }
    }),
  );
}

/**
 * The Solana sandbox transfer as a target of `npm run bench:money`: funds every tenant's wallet,
 * then answers one request at a time, 0.001 SOL from a random tenant to one of 32 addresses, each
 * with its own Idempotency-Key (the request the standalone run above sends).
 */
export async function solanaTransferRequests(
  baseUrl: string,
  apiKeys: string[],
  network = 'devnet',
): Promise<() => { path: string; headers: Record<string, string>; body: string }> {
  await fundSolanaWallets(baseUrl, apiKeys, network);
  const recipients = Array.from({ length: 32 }, () => Keypair.generate().publicKey.toBase58());
  const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)]!;
  return () => ({
    path: '/api/v1/solana/transfer-sol',
    headers: { 'content-type': 'application/json', 'x-api-key': pick(apiKeys), 'idempotency-key': randomUUID() },
    body: JSON.stringify({ to: pick(recipients), amount: '0.001', network }),
  });
}

/** Closed-loop load: `concurrency` workers each sending 0.001 SOL to one of 32 addresses, one request at a time. */
export async function runSolanaTransfers(load: SolanaTransferLoad): Promise<SolanaTransferResult> {
  const network = load.network ?? 'devnet';
  if (load.fund ?? true) await fundSolanaWallets(load.baseUrl, load.apiKeys, network);
  const recipients = Array.from({ length: 32 }, () => Keypair.generate().publicKey.toBase58());
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + load.seconds * 1000;
  await Promise.all(
    Array.from({ length: load.concurrency }, async (_, worker) => {
      const key = load.apiKeys[worker % load.apiKeys.length]!;
      while (performance.now() < deadline) {
        const begun = performance.now();
        try {
          const { status, json } = await post(load.baseUrl, key, '/api/v1/solana/transfer-sol', {
            to: recipients[Math.floor(Math.random() * recipients.length)],
            amount: '0.001',
            network,
          });
          if (status < 300 && json?.data?.status === 'confirmed') latencies.push(performance.now() - begun);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? Math.round(latencies[Math.floor(q * (latencies.length - 1))]!) : 0);
  return { count: latencies.length, errors, p50: at(0.5), p99: at(0.99), elapsed };
}

async function counters(url: string): Promise<{ commits: number; inserted: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      'select xact_commit::text as commits, tup_inserted::text as inserted from pg_stat_database where datname = current_database()',
    );
    return { commits: Number(rows[0].commits), inserted: Number(rows[0].inserted) };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string', default: 'pglite' },
      seconds: { type: 'string', default: '15' },
      concurrency: { type: 'string', default: '16' },
      tenants: { type: 'string', default: '16' },
    },
  });
  const database = await benchDatabase(values.db!);
  const server = spawnServer('scripts/bench/tenants-server.ts', [], {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: '',
    BENCH_TENANTS: values.tenants!,
  });
  const ready = await new Promise<{ pid: number; port: number; keys: string[] }>((resolve) =>
    createInterface({ input: server.stdout! }).on('line', (l) => l.startsWith('{"ready"') && resolve(JSON.parse(l))),
  );
  const before = database.url ? await counters(database.url) : undefined;
  const baseUrl = `http://127.0.0.1:${ready.port}`;
  const concurrency = Number(values.concurrency);
  const warm = await runSolanaTransfers({ baseUrl, apiKeys: ready.keys, concurrency, seconds: 3 });
  const cpuBefore = cpuMicros(ready.pid);
  const load1 = loadavg()[0]!;
  const result = await runSolanaTransfers({
    baseUrl,
    apiKeys: ready.keys,
    concurrency,
    seconds: Number(values.seconds),
    fund: false,
  });
  const cpu = cpuMicros(ready.pid) - cpuBefore;
  const load2 = loadavg()[0]!;
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
  const after = database.url ? await counters(database.url) : undefined;
  const requests = warm.count + warm.errors + result.count + result.errors + ready.keys.length * 2;
  const report = {
    db: values.db,
    concurrency,
    tenants: ready.keys.length,
    transfersPerSecond: Math.round(result.count / result.elapsed),
    p50ms: result.p50,
    p99ms: result.p99,
    errors: result.errors,
    serverCpuMsPerTransfer: result.count ? Math.round(cpu / result.count / 100) / 10 : null,
    ...(before && after
      ? {
          commitsPerRequest: Math.round(((after.commits - before.commits) / requests) * 10) / 10,
          insertsPerRequest: Math.round(((after.inserted - before.inserted) / requests) * 10) / 10,
        }
      : {}),
    loadAverage1m: [load1, load2].map((l) => Math.round(l * 10) / 10),
  };
  console.log(JSON.stringify(report));
  await database.drop();
  process.exit(0);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await onLoadCore(main);

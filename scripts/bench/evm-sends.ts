/**
 * npm run bench:evm-sends [-- --warmup 3 --round 10 --rounds 3 --concurrency 8]
 *
 * Sandbox ERC-20 sends through REST (`POST /api/v1/evm/base/send-token`, 0.01 USDC, each with its
 * own Idempotency-Key), as a partner sends them: the gateway (scripts/bench/tenants-server.ts, on
 * CPU 0, workers on, bundled as `npm start` runs it) signs, holds, stores and sends each one to its sandbox chain and answers once
 * it is mined. Closed loop at `concurrency`, each connection sending from a wallet of its own (one
 * wallet's sends take turns by design). Two gateways, one on PGlite and one on PostgreSQL (a
 * database of its own on DATABASE_URL's server; skipped without it), measured in interleaved
 * rounds (medians): sends/s, p50/p99, the gateway process's CPU per send (VM, signing, SQL client;
 * on PGlite also the database). A send counts only when answered 201 and `confirmed`.
 * Goal (issue 42): PostgreSQL ≥ 50/s with p99 ≤ 500 ms at c=8; PGlite p99 ≤ 1 s.
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { benchDatabase } from './database.js';
import {
  compiledServer,
  machineLine,
  measureInterleaved,
  onLoadCore,
  percentile,
  resultTable,
  roundFlags,
  roundOptions,
  spawnServer,
  type Target,
} from './harness/index.js';
import { benchArgs } from './harness/options.js';

const { values } = benchArgs({ options: { ...roundFlags, concurrency: { type: 'string', default: '8' } } });
const concurrency = Number(values.concurrency);

async function post(baseUrl: string, key: string, path: string, body: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json().catch(() => undefined)) as any };
}

/** A gateway on `engine` with one funded wallet per connection, as a target of the interleaved rounds. */
async function gatewayTarget(engine: 'pglite' | 'postgres', script: string) {
  const database = await benchDatabase(engine);
  const server = spawnServer(script, [], {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: '',
    BENCH_TENANTS: String(concurrency),
  });
  const ready = await new Promise<{ pid: number; port: number; keys: string[] }>((resolve) =>
    createInterface({ input: server.stdout! }).on('line', (l) => l.startsWith('{"ready"') && resolve(JSON.parse(l))),
  );
  const baseUrl = `http://127.0.0.1:${ready.port}`;
  for (const key of ready.keys)
    for (const grant of [
      { asset: 'ETH', amount: '10' },
      { asset: 'USDC', amount: '100000' },
    ]) {
      const { status, json } = await post(baseUrl, key, '/api/v1/evm/base/sandbox/faucet', grant);
      if (status !== 201) throw new Error(`faucet answered ${status}: ${JSON.stringify(json)}`);
    }
  const recipients = Array.from({ length: 32 }, () => privateKeyToAccount(generatePrivateKey()).address);
  const target: Target = {
    name: `REST send-token, ${engine === 'pglite' ? 'PGlite' : 'PostgreSQL'}`,
    pid: ready.pid,
    async drive(seconds) {
      const latencies: number[] = [];
      let errors = 0;
      const deadline = performance.now() + seconds * 1000;
      await Promise.all(
        ready.keys.map(async (key) => {
          while (performance.now() < deadline) {
            const begun = performance.now();
            const to = recipients[Math.floor(Math.random() * recipients.length)];
            try {
              const { status, json } = await post(baseUrl, key, '/api/v1/evm/base/send-token', {
                token: 'USDC',
                to,
                amount: '0.01',
              });
              if (status === 201 && json?.data?.status === 'confirmed') latencies.push(performance.now() - begun);
              else errors++;
            } catch {
              errors++;
            }
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      return {
        requests: latencies.length,
        p50: Math.round(percentile(latencies, 50)),
        p99: Math.round(percentile(latencies, 99)),
        errors,
      };
    },
  };
  const stop = async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.on('exit', resolve));
    await database.drop();
  };
  return { target, stop };
}

async function main(): Promise<void> {
  const engines: Array<'pglite' | 'postgres'> = process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
  const gateways = [];
  // Bundled, as `npm start` runs the gateway (harness compiledServer); BENCH_TSX=1 runs it through tsx.
  const script = await compiledServer('scripts/bench/tenants-server.ts');
  for (const engine of engines) gateways.push(await gatewayTarget(engine, script));
  try {
    console.log(machineLine());
    const options = roundOptions(values);
    console.log(`c=${concurrency}, one wallet per connection; ${options.note}`);
    const results = await measureInterleaved(
      gateways.map((g) => g.target),
      options,
    );
    console.log(resultTable(results));
    console.log(machineLine());
  } finally {
    for (const gateway of gateways) await gateway.stop();
  }
  process.exit(0);
}

await onLoadCore(main);

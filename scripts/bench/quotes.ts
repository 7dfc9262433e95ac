/**
 * npm run bench:quotes [-- --db pglite|postgres --duration 10]
 *
 * Swap quote latency on the sandbox market (GET /api/v1/solana-exchange/quote/*): each request
 * prices every route against the on-chain pool reserves, reads the wallet's balance and stores the
 * quote. One connection (latency alone) and 8 (under load); server on CPU 0, autocannon on CPU 1.
 */
import { benchArgs } from './harness/options.js';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { SOL_MINT, tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { benchDatabase } from './database.js';
import { onLoadCore, spawnServer } from './harness/pinning.js';

const { values } = benchArgs({
  options: { db: { type: 'string', default: 'pglite' }, duration: { type: 'string', default: '10' } },
});

const USDC = tokenBySymbol('USDC')!.address;
const BONK = tokenBySymbol('BONK')!.address;
const USDT = tokenBySymbol('USDT')!.address;
const QUERIES: Array<[string, string]> = [
  ['token to SOL (1 hop)', `/api/v1/solana-exchange/quote/token-to-sol?inputMint=${USDC}&amount=25`],
  [
    'SOL to token, ExactOut (1 hop)',
    `/api/v1/solana-exchange/quote/sol-to-token?outputMint=${USDT}&amount=10&swapMode=ExactOut`,
  ],
  [
    'token to token (2 hops: BONK → SOL → USDT)',
    `/api/v1/solana-exchange/quote/token-to-token?inputMint=${BONK}&outputMint=${USDT}&amount=1000000`,
  ],
];

await onLoadCore(async () => {
  const database = await benchDatabase(values.db!);
  const server = spawnServer('scripts/bench/quotes-server.ts', [], {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: '',
  });
  const ready = await new Promise<{ port: number; key: string }>((resolve) =>
    createInterface({ input: server.stdout! }).on('line', (l) => l.startsWith('{"ready"') && resolve(JSON.parse(l))),
  );
  const rows: string[] = [];
  for (const [name, path] of QUERIES) {
    for (const connections of [1, 8]) {
      const options = {
        url: `http://127.0.0.1:${ready.port}${path}`,
        headers: { 'x-api-key': ready.key },
        connections,
      };
      await autocannon({ ...options, duration: 2 });
      const result = await autocannon({ ...options, duration: Number(values.duration) });
      rows.push(
        `| ${name} | ${connections} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx + result.errors} |`,
      );
      console.log(rows.at(-1));
    }
  }
  console.log(
    `\nDatabase: ${values.db}. Sandbox quotes (SOL is ${SOL_MINT.slice(0, 6)}…).\n\n| quote | connections | req/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n${rows.join('\n')}`,
  );
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
  await database.drop();
  process.exit(0);
});

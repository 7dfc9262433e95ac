/**
 * npm run bench:evm-chain [-- --db pglite|postgres --senders 32 --transfers 640]
 *
 * ERC-20 transfers through one sandbox EVM chain (src/domain/evm/sandbox-chain.ts) in this process,
 * as the gateway sends them: each sender signs its transfers (viem, EIP-1559) and sends them one
 * after another with `sendRaw`, which answers once mined; senders run at once, so blocks batch
 * whatever arrived meanwhile. Reports transfers/s and the process's CPU ms per transfer (user +
 * system: the VM, signing, the SQL client; with PGlite also the database, which runs in-process;
 * PostgreSQL's server CPU is not counted). Signing is done before the clock starts.
 */
import { cpus, loadavg } from 'node:os';
import { hexToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { openDatabase } from '../../src/db/client.js';
import { sandboxEvmChains } from '../../src/domain/evm/sandbox-chains.js';
import { transferData } from '../../test/evm/sandbox-signing.js';
import { benchDatabase } from './database.js';
import { benchArgs } from './harness/options.js';

const { values } = benchArgs({
  options: {
    db: { type: 'string', default: 'pglite' },
    senders: { type: 'string', default: '32' },
    transfers: { type: 'string', default: '640' },
  },
});
const senders = Number(values.senders);
const perSender = Math.ceil(Number(values.transfers) / senders);

const database = await benchDatabase(values.db!);
const handle = await openDatabase(
  database.url ? { databaseUrl: database.url, poolSize: 10 } : { pgliteDataDir: 'memory://' },
);
try {
  const chain = sandboxEvmChains(handle.db).chainFor('base');
  const usdc = chain.tokenAddress('USDC') as `0x${string}`;
  const fees = await chain.feeTerms();
  const accounts = Array.from({ length: senders }, () => privateKeyToAccount(generatePrivateKey()));
  for (const account of accounts) {
    await chain.faucet(account.address, { native: true }, 10n ** 18n);
    await chain.faucet(account.address, { token: 'USDC' }, 10n ** 12n);
  }
  const to = privateKeyToAccount(generatePrivateKey()).address;
  const signed = await Promise.all(
    accounts.map((account) =>
      Promise.all(
        Array.from({ length: perSender }, async (_, nonce) =>
          hexToBytes(
            await account.signTransaction({
              type: 'eip1559',
              chainId: chain.chainId,
              nonce,
              to: usdc,
              data: transferData(to, 1n),
              gas: 60_000n,
              maxFeePerGas: fees.maxFeePerGas,
              maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
            }),
          ),
        ),
      ),
    ),
  );
  const height = await chain.height();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    signed.map(async (mine) => {
      for (const wire of mine) await chain.sendRaw(wire);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const total = senders * perSender;
  if ((await chain.tokenBalance(to, usdc)) !== BigInt(total)) throw new Error('not every transfer landed');
  const blocks = (await chain.height()) - height;
  console.log(
    `${values.db}: ${total} ERC-20 transfers from ${senders} senders in ${blocks} blocks, ${seconds.toFixed(2)} s: ` +
      `${(total / seconds).toFixed(0)} transfers/s, ${((used.user + used.system) / 1000 / total).toFixed(2)} ms CPU per transfer ` +
      `(${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
  );
} finally {
  await handle.close();
  await database.drop();
}

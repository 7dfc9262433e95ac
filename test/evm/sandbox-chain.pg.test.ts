import { sql } from 'drizzle-orm';
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { openDatabase, queryRows } from '../../src/db/client.js';
import { sandboxEvmChains } from '../../src/domain/evm/sandbox-chains.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';
import { newSigner, transferData } from './sandbox-signing.js';

const USDC = 1_000_000n;

describe.skipIf(!onPostgres)('one sandbox EVM chain for every instance (PostgreSQL)', () => {
  it('two instances sending at once: one chain, every transaction mined once, blocks never forked', async () => {
    const url = await isolatedTestDatabaseUrl();
    const handles = await Promise.all([1, 2].map(() => openDatabase({ databaseUrl: url, poolSize: 10 })));
    try {
      const [a, b] = handles.map((h) => sandboxEvmChains(h.db).chainFor('base'));
      const senders = Array.from({ length: 8 }, () => newSigner());
      const to = newSigner().address;
      // Funded through both at once: the first use builds genesis once however many ask.
      await Promise.all(
        senders.map(async (s, i) => {
          const chain = i % 2 ? b! : a!;
          await chain.faucet(s.address, { native: true }, 10n ** 18n);
          await chain.faucet(s.address, { token: 'USDC' }, 100n * USDC);
        }),
      );
      const usdc = a!.tokenAddress('USDC') as Hex;
      const hashes = (
        await Promise.all(
          senders.map(async (s, i) => {
            const sent: string[] = [];
            for (let n = 0; n < 3; n++) {
              // Each sender's transactions go through either instance, one after another.
              const chain = (i + n) % 2 ? b! : a!;
              sent.push(await chain.sendRaw(await s.sign(chain, { to: usdc, data: transferData(to, USDC), nonce: n })));
            }
            return sent;
          }),
        )
      ).flat();
      for (const hash of hashes) expect(await b!.txState(hash)).toEqual({ state: 'confirmed' });
      expect(await a!.tokenBalance(to, usdc)).toBe(24n * USDC);
      expect(await b!.tokenBalance(to, usdc)).toBe(24n * USDC);
      for (const s of senders) expect(await b!.transactionCount(s.address)).toBe(3n);

      const [row] = await queryRows<{ txs: number; distinct_txs: number; blocks: number; first: number; last: number }>(
        handles[0]!.db,
        sql`select (select count(*)::int from evm_sandbox_transactions where network = 'base') as txs,
              (select count(distinct hash)::int from evm_sandbox_transactions where network = 'base') as distinct_txs,
              (select count(*)::int from evm_sandbox_blocks where network = 'base') as blocks,
              (select min(number)::int from evm_sandbox_blocks where network = 'base') as first,
              (select max(number)::int from evm_sandbox_blocks where network = 'base') as last`,
      );
      expect(row!.txs).toBe(row!.distinct_txs);
      // 16 faucet blocks and the 24 transfers, batched into blocks; one chain of blocks from genesis.
      expect(row!.txs).toBe(16 + 24);
      expect(row!.first).toBe(0);
      expect(row!.blocks).toBe(row!.last + 1);
      expect(await a!.height()).toBe(BigInt(row!.last));
      const parents = await queryRows<{ broken: number }>(
        handles[0]!.db,
        sql`select count(*)::int as broken from evm_sandbox_blocks c
            left join evm_sandbox_blocks p on p.network = c.network and p.number = c.number - 1 and p.hash = c.parent_hash
            where c.network = 'base' and c.number > 0 and p.hash is null`,
      );
      expect(parents[0]!.broken).toBe(0);
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  });
});

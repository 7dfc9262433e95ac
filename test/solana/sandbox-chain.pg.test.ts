import { address } from '@solana/kit';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { parseTokenAccount } from '../../src/domain/solana/litesvm-chain.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { reservesOf } from '../../src/domain/solana/sandbox-amm.js';
import { SANDBOX_POOLS, SOL_MINT, tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, queryRows } from '../../src/db/client.js';
import { SandboxChainStore } from '../../src/domain/solana/sandbox-chain-store.js';
import { airdrop, createSandboxWorld } from '../../src/domain/solana/sandbox-world.js';
import { sql } from 'drizzle-orm';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';
import { seedTenant } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

describe.skipIf(!onPostgres)('one sandbox chain for every instance (PostgreSQL)', () => {
  it('two instances swapping at once against one pool: every swap lands, none overwrites another', async () => {
    const url = await isolatedTestDatabaseUrl();
    const [a, b] = await Promise.all([
      openDatabase({ databaseUrl: url, poolSize: 10 }),
      openDatabase({ databaseUrl: url, poolSize: 10 }),
    ]);
    try {
      const config = loadConfig({}, { NODE_ENV: 'test' });
      const instances = [a, b].map((d) =>
        createServices(config, d.db, systemClock, () => undefined, new RateLimiter(undefined)),
      );
      const traders: Principal[] = [];
      for (let i = 0; i < 6; i++) {
        traders.push({
          kind: 'api_key',
          credentialId: 't',
          userId: (await seedTenant(instances[0]!)).user.id,
          environment: 'sandbox',
          abilities: abilitiesOf('FULL_ACCESS'),
        });
      }
      // Funded through one instance, seen by the other.
      for (const trader of traders)
        await instances[0]!.sandboxFaucet.fund(trader, { network: 'devnet', asset: 'SOL', amount: '10' });
      expect((await instances[1]!.solanaPortfolio.solBalance(traders[0]!, 'devnet')).amount).toBe('10');

      const pool = SANDBOX_POOLS.find((p) => p.name === 'SOL/USDC')!;
      const [solBefore] = await instances[1]!.sandboxChains.read('devnet', (svm) => reservesOf(svm, pool));
      const results = await Promise.all(
        traders.map((trader, i) =>
          instances[i % 2]!.solanaExchange.swap(
            trader,
            {
              inputMint: SOL_MINT,
              outputMint: tokenBySymbol('USDC')!.address,
              amount: '1',
              slippageBps: 500,
              network: 'devnet',
            },
            undefined,
          ),
        ),
      );
      expect(results.every((r) => r.status === 'confirmed')).toBe(true);
      const [solAfter] = await instances[0]!.sandboxChains.read('devnet', (svm) => reservesOf(svm, pool));
      expect(solAfter - solBefore!).toBe(6_000_000_000n);
      for (const trader of traders) {
        const usdc = await instances[1]!.solanaPortfolio.tokenBalance(trader, tokenBySymbol('USDC')!.address, 'devnet');
        expect(usdc.amountRaw).toBeGreaterThan(0n);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('ten concurrent transfers of 200 USDC from a wallet holding 1,000: exactly five move money, nothing is lost', async () => {
    const url = await isolatedTestDatabaseUrl();
    const database = await openDatabase({ databaseUrl: url, poolSize: 20 });
    try {
      const services = createServices(
        loadConfig({}, { NODE_ENV: 'test', SOLANA_CONFIRM_WAIT_MS: 2_000 }),
        database.db,
        systemClock,
        () => undefined,
        new RateLimiter(undefined),
      );
      const sender: Principal = {
        kind: 'api_key',
        credentialId: 't',
        userId: (await seedTenant(services)).user.id,
        environment: 'sandbox',
        abilities: abilitiesOf('FULL_ACCESS'),
      };
      await services.sandboxFaucet.fund(sender, { network: 'testnet' });
      const to = Keypair.generate().publicKey.toBase58();
      const USDC = tokenBySymbol('USDC')!.address;
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () =>
          services.solanaTransfers
            .transferToken(sender, { to, tokenMintAddress: USDC, amount: '200', network: 'testnet' }, undefined)
            .then(
              (t) => t.status,
              (e: { code?: string; message?: string }) => e.code ?? `error: ${e.message}`,
            ),
        ),
      );
      expect(outcomes.filter((o) => o === 'confirmed')).toHaveLength(5);
      // The rest were refused before signing, or refused by the chain: never confirmed, never pending.
      expect(outcomes.filter((o) => o !== 'confirmed').every((o) => o === 'INSUFFICIENT_FUNDS' || o === 'failed')).toBe(
        true,
      );
      expect((await services.solanaPortfolio.tokenBalance(sender, USDC, 'testnet')).amountRaw).toBe(0n);
      const received = await services.sandboxChains.read('testnet', (svm) =>
        svm.getAccount(address(getAssociatedTokenAddressSync(new PublicKey(USDC), new PublicKey(to)).toBase58())),
      );
      expect(received.exists && parseTokenAccount(received.data).amount).toBe(1_000_000_000n);
    } finally {
      await database.close();
    }
  });

  it('runs the VM with no transaction open: the chain row is locked only for the short write after it', async () => {
    const url = await isolatedTestDatabaseUrl();
    const database = await openDatabase({ databaseUrl: url, poolSize: 5 });
    try {
      const store = new SandboxChainStore(database.db, createSandboxWorld);
      const openTransactions = async () => {
        const [row] = await queryRows<{ open: number }>(
          database.db,
          sql`select count(*)::int as open from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid()
                and (backend_xid is not null or state like 'idle in transaction%')`,
        );
        return row!.open;
      };
      const owner = Keypair.generate().publicKey;
      let whileRunning = -1;
      let whileWriting = -1;
      await store.change('devnet', async (chain) => {
        whileRunning = await openTransactions();
        airdrop(chain, owner, 1_000_000_000n, true);
        return async () => {
          whileWriting = await openTransactions();
        };
      });
      expect(whileRunning).toBe(0);
      // The probe itself proves it can see the write's transaction.
      expect(whileWriting).toBe(1);
      expect(await store.read('devnet', (svm) => svm.getBalance(address(owner.toBase58())))).toBe(1_000_000_000n);
    } finally {
      await database.close();
    }
  });
});

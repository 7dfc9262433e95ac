import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { chainSends } from '../../src/db/chain-schema.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { systemClock } from '../../src/domain/clock.js';
import { DomainError } from '../../src/domain/errors.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import { createServices } from '../../src/services.js';
import { seedTenant } from '../helpers/app.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

describe.skipIf(!onPostgres)('a swap quote executes at most once (PostgreSQL)', () => {
  it('one quoteId executed concurrently by two instances, with and without keys: exactly one swap', async () => {
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
      const trader: Principal = {
        kind: 'api_key',
        credentialId: 't',
        userId: (await seedTenant(instances[0]!)).user.id,
        environment: 'sandbox',
        abilities: abilitiesOf('FULL_ACCESS'),
      };
      await instances[0]!.sandboxFaucet.fund(trader, { network: 'devnet' });
      const USDC = tokenBySymbol('USDC')!.address;
      const USDT = tokenBySymbol('USDT')!.address;
      for (const keys of [
        [undefined, undefined],
        ['k-a', 'k-b'],
      ] as const) {
        const quote = await instances[0]!.solanaExchange.quote(trader, {
          inputMint: USDC,
          outputMint: USDT,
          amount: '10',
          network: 'devnet',
        });
        const outcomes = await Promise.all(
          keys.map((key, i) =>
            instances[i]!.solanaExchange.swap(trader, { quoteId: quote.quoteId }, key).then(
              (r) => r.status,
              (e: unknown) => (e instanceof DomainError ? e.code : String(e)),
            ),
          ),
        );
        expect(outcomes.sort()).toEqual(['CONFLICT', 'confirmed']);
        const swaps = await a.db
          .select()
          .from(chainSends)
          .where(and(eq(chainSends.userId, trader.userId), eq(chainSends.quoteId, quote.quoteId)));
        expect(swaps).toHaveLength(1);
      }
      const usdc = await instances[1]!.solanaPortfolio.tokenBalance(trader, USDC, 'devnet');
      expect(usdc.amount).toBe('980');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { ManualClock } from '../../src/domain/clock.js';
import { DomainError } from '../../src/domain/errors.js';
import { evmSandboxMarketMakers } from '../../src/domain/evm/sandbox-market-makers.js';
import { marketMakerSource } from '../../src/domain/reconciliation/balances.js';
import { Reconciliation } from '../../src/domain/reconciliation/reconciliation-service.js';
import { createTestApp, seedTenant } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { RECONCILIATION_SETTINGS } from '../helpers/reconciliation.js';

const ETH = 10n ** 18n;
const USD6 = 10n ** 6n;
const RACERS = 12;

/**
 * One quote raced by many requests executes once (proven on PostgreSQL, where they truly run at
 * once; PGlite serialises them); a two-hop token swap on Ethereum approves exactly and leaves no
 * allowance; and the market makers' pools reconcile against the swaps recorded, to the unit.
 */
describe.skipIf(!onPostgres)('EVM swaps under races, and the pools reconciled (PostgreSQL)', () => {
  it('one quote, many swaps at once: exactly one signs, the rest are refused with nothing signed', async () => {
    const t = await createTestApp({ isolated: true });
    try {
      const { services } = t;
      const trader: Principal = {
        kind: 'api_key',
        credentialId: 't',
        userId: (await seedTenant(services)).user.id,
        environment: 'sandbox',
        abilities: abilitiesOf('FULL_ACCESS'),
      };
      const wallet = await services.evmWallets.walletOf(trader);
      const chain = services.evmChains.sandboxFor('ethereum');
      await chain.faucet(wallet.address, { native: true }, ETH);
      await chain.faucet(wallet.address, { token: 'USDT' }, 100n * USD6);

      // USDT → CNGN has no pool of its own: it routes USDT → WETH → CNGN.
      const quote = await services.evmExchange.quote(trader, 'ethereum', 'token-to-token', {
        inputToken: 'USDT',
        outputToken: 'CNGN',
        amount: '40',
      });
      expect(quote.route).toMatchObject({ hops: 2, tokens: ['USDT', 'WETH', 'CNGN'] });
      const outcomes = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          services.evmExchange
            .swap(trader, 'ethereum', { quoteId: quote.quoteId }, i % 2 === 0 ? `race-${i}` : undefined)
            .then(
              (result) => ({ ok: result }),
              (error: unknown) => ({ refused: error instanceof DomainError ? error.code : String(error) }),
            ),
        ),
      );
      const done = outcomes.flatMap((o) => ('ok' in o ? [o.ok] : []));
      expect(done).toHaveLength(1);
      expect(outcomes.filter((o) => 'refused' in o).map((o) => (o as { refused: string }).refused)).toEqual(
        Array(RACERS - 1).fill('CONFLICT'),
      );
      const [swapped] = done;
      expect(swapped!.status).toBe('confirmed');
      expect(BigInt(swapped!.outputAmountRaw)).toBeGreaterThanOrEqual(
        (BigInt(quote.amounts.outputAmountRaw) * 995n) / 1000n,
      );
      // Its approval and its swap: two nonces, nothing else was signed by the losers.
      expect(swapped!.legs.map((l) => l.kind)).toEqual(['approve', 'swap']);
      expect(await chain.transactionCount(wallet.address)).toBe(2n);
      expect(await chain.tokenBalance(wallet.address, chain.tokenAddress('USDT'))).toBe(60n * USD6);

      // A second USDT swap finds no allowance left, so it needs no reset to zero first.
      const again = await services.evmExchange.quote(trader, 'ethereum', 'token-to-native', {
        inputToken: 'USDT',
        amount: '10',
      });
      const second = await services.evmExchange.swap(trader, 'ethereum', { quoteId: again.quoteId }, undefined);
      expect(second.legs.map((l) => [l.kind, l.amount])).toEqual([
        ['approve', '10'],
        ['swap', '10'],
      ]);

      // The market makers' pools hold their seed plus what the swaps paid in, less what they paid out.
      const clock = new ManualClock(new Date('2026-05-02T03:00:00.000Z'));
      const recon = new Reconciliation(
        services.db,
        clock,
        [marketMakerSource(evmSandboxMarketMakers('ethereum', () => chain))],
        RECONCILIATION_SETTINGS,
      );
      const run = await recon.run({ environment: 'sandbox', date: '2026-05-01', trigger: 'manual' });
      expect(run.sources[0]).toMatchObject({ provider: 'evm-ethereum-market-makers', breaks: 0 });
      expect(run.outcome).toBe('ok');
    } finally {
      await t.close();
    }
  });
});

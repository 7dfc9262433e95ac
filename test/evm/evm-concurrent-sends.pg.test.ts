import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { DomainError } from '../../src/domain/errors.js';
import { createTestApp, seedTenant } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

const USDC = 10n ** 6n;
const SENDS = 200;
const AFFORDABLE = 150;

describe.skipIf(!onPostgres)('EVM sends from one wallet at once (PostgreSQL)', () => {
  it('200 keyed sends while the mempool drops some: as many land as the balance allows, nonces contiguous, each nonce one content, each hold ended once', async () => {
    const t = await createTestApp({ isolated: true, config: { SOLANA_CONFIRM_WAIT_MS: 200 } });
    try {
      const { services } = t;
      const principalOf = async (): Promise<Principal> => ({
        kind: 'api_key',
        credentialId: 't',
        userId: (await seedTenant(services)).user.id,
        environment: 'sandbox',
        abilities: abilitiesOf('FULL_ACCESS'),
      });
      const sender = await principalOf();
      const recipient = await services.evmWallets.walletOf(await principalOf());
      const from = (await services.evmWallets.walletOf(sender)).address;
      const chain = services.evmChains.sandboxFor('base');
      const usdc = chain.tokenAddress('USDC');
      await chain.faucet(from, { native: true }, 10n ** 18n);
      await chain.faucet(from, { token: 'USDC' }, BigInt(AFFORDABLE) * USDC);

      // Held in the mempool while they are sent, so some can be dropped before anything is mined.
      await chain.mempool.pause();
      const outcomes = await Promise.all(
        Array.from({ length: SENDS }, (_, i) =>
          services.evmTransfers
            .sendToken(sender, 'base', 'USDC', { to: recipient.address, amount: '1' }, `concurrent-${i}`)
            .then(
              (view) => ({ ok: view }),
              (error: unknown) => ({ error }),
            ),
        ),
      );
      const accepted = outcomes.flatMap((o) => ('ok' in o ? [o.ok] : []));
      const refused = outcomes.flatMap((o) => ('error' in o ? [o.error] : []));
      expect(accepted).toHaveLength(AFFORDABLE);
      expect(refused).toHaveLength(SENDS - AFFORDABLE);
      for (const error of refused) {
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).message).toMatch(/^Insufficient USDC on base: 0 spendable, 1 asked\.$/);
      }

      // The mempool forgets some; what is left is mined (up to the first gap).
      const held = await chain.mempool.pending();
      const dropped = held.filter((_, i) => i % 17 === 5);
      expect(dropped.length).toBeGreaterThan(5);
      await chain.mempool.drop(dropped);
      // Mining stops at the first dropped nonce until the job sends that transaction again.
      const releasing = chain.mempool.release();

      // The confirmation job's steps until every send is final (a dropped one is sent again).
      const ids = new Set(accepted.map((view) => view.id));
      for (let round = 0; ids.size > 0 && round < 50; round++)
        for (const id of [...ids]) if ((await services.evmTransfers.confirm(id)) === 'final') ids.delete(id);
      await releasing;
      expect(ids.size).toBe(0);

      const rows = await queryRows<{
        id: string;
        status: string;
        nonce: string;
        tx_hash: string;
        replaces: string | null;
      }>(
        services.db,
        sql`select s.id, s.status::text, s.nonce::text, s.tx_hash, s.replaces from chain_sends s
            where s.family = 'evm' and s.from_address = ${from} order by s.nonce`,
      );
      expect(rows).toHaveLength(AFFORDABLE);
      expect(rows.filter((r) => r.status !== 'confirmed')).toEqual([]);
      // Each nonce was signed for one content, and the nonces are 0..149 without a gap.
      expect(rows.map((r) => Number(r.nonce))).toEqual(Array.from({ length: AFFORDABLE }, (_, i) => i));
      const minedNonces = await Promise.all(rows.map(async (r) => (await chain.receipt(r.tx_hash))!.nonce));
      expect(minedNonces).toEqual(Array.from({ length: AFFORDABLE }, (_, i) => BigInt(i)));
      expect(await chain.transactionCount(from)).toBe(BigInt(AFFORDABLE));
      expect(await chain.tokenBalance(recipient.address, usdc)).toBe(BigInt(AFFORDABLE) * USDC);
      expect(await chain.tokenBalance(from, usdc)).toBe(0n);

      // Every hold ended once: none still held, each with exactly one capture or release posting.
      const holds = await queryRows<{ status: string; postings: number }>(
        services.db,
        sql`select h.status::text, (select count(*)::int from asset_postings p
              where p.reference = h.id::text and p.kind in ('capture', 'release')) as postings
            from asset_holds h join chain_sends s on s.id = h.send_id
            where s.family = 'evm' and s.from_address = ${from}`,
      );
      expect(holds).toHaveLength(AFFORDABLE * 2);
      expect(holds.filter((h) => h.status !== 'captured' || h.postings !== 1)).toEqual([]);

      // A keyed send asked again answers as it was first answered, and signs nothing.
      const first = accepted[0]!;
      const index = outcomes.findIndex((o) => 'ok' in o && o.ok.id === first.id);
      const again = await services.evmTransfers.sendToken(
        sender,
        'base',
        'USDC',
        { to: recipient.address, amount: '1' },
        `concurrent-${index}`,
      );
      expect(again.id).toBe(first.id);
      expect(await chain.transactionCount(from)).toBe(BigInt(AFFORDABLE));
    } finally {
      await t.close();
    }
  });
});

import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { chainSends, type NewChainSend } from '../../src/db/chain-schema.js';
import { operationTransitions } from '../../src/db/lifecycle-schema.js';
import { events } from '../../src/db/schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { chainSendStore, insertChainSend } from '../../src/domain/chain/chain-send-store.js';
import { chainSendLifecycles, transitionChainSend } from '../../src/domain/chain/chain-sends.js';
import { IllegalTransition, isLegal } from '../../src/domain/lifecycle/transition.js';
import { CHAIN_SEND, transitionChainSend as transitionSolanaSend } from '../../src/domain/solana/chain-sends.js';
import { insertTransfer, transferStore } from '../../src/domain/solana/transfer-store.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';

/**
 * One chain-send table for every family: each family's store sees only its own rows, and a family
 * whose sends carry a nonce (EVM next) moves a send to `replaced` when another with its nonce
 * landed, on the same table and the same statement as every other move. `nonced` stands for such
 * a family here.
 */
describe('the one chain-send table of every family', () => {
  let services: Services;
  let alice: Principal;
  const family = 'nonced';
  const eventData = (row: { txHash: string; status: string }) => ({ hash: row.txHash, status: row.status });
  const store = chainSendStore({ family, walletTable: 'solana_wallets', confirmJob: 'nonced.confirm', eventData });
  const lifecycles = chainSendLifecycles(eventData, { replaceable: true });

  beforeAll(async () => {
    services = await createTestServices();
    alice = await sandboxPrincipal(services);
  });

  const send = (values: Partial<NewChainSend>): Promise<typeof chainSends.$inferSelect> =>
    insertChainSend(services.db, {
      userId: alice.userId,
      environment: 'sandbox',
      family,
      network: 'testnet',
      kind: 'native',
      fromAddress: '0xfrom',
      toAddress: '0xto',
      amountRaw: 10n ** 15n,
      decimals: 18,
      feeRaw: 21_000n * 3_000_000_000n,
      txHash: `0x${crypto.randomUUID().replaceAll('-', '')}`,
      wire: '',
      status: 'pending',
      ...values,
    });
  const historyOf = async (id: string) =>
    (await services.db.select().from(operationTransitions).where(eq(operationTransitions.operationId, id))).map((h) => [
      h.kind,
      h.fromStatus,
      h.toStatus,
    ]);
  const eventsOf = async (hash: string) =>
    (await services.db.select().from(events).where(eq(events.userId, alice.userId)))
      .filter((e) => (e.data as Record<string, unknown>)['hash'] === hash)
      .map((e) => e.type);

  it('replaces a pending send by the one with its nonce that landed: one move, its history and its event', async () => {
    const original = await send({ nonce: 7n });
    const bump = await send({ nonce: 7n, replaces: original.id, feeRaw: 21_000n * 6_000_000_000n });
    expect(isLegal(lifecycles.send, 'pending', 'replaced')).toBe(true);
    expect(isLegal(lifecycles.send, 'replaced', 'confirmed')).toBe(false);

    const at = new Date();
    const landed = await services.db.transaction((tx) =>
      transitionChainSend(store, lifecycles, tx, bump, 'confirmed', at),
    );
    expect(landed?.status).toBe('confirmed');
    const racing = await Promise.all(
      [0, 1].map(() =>
        services.db.transaction((tx) =>
          transitionChainSend(store, lifecycles, tx, original, 'replaced', at, { error: `Replaced by ${bump.txHash}` }),
        ),
      ),
    );
    expect(racing.filter((row) => row !== undefined)).toHaveLength(1);
    const stored = (await store.findTransfer(services.db, original.id))!;
    expect([stored.status, stored.error, stored.nonce]).toEqual(['replaced', `Replaced by ${bump.txHash}`, 7n]);
    expect(await historyOf(original.id)).toEqual([['chain_send', 'pending', 'replaced']]);
    expect(await eventsOf(original.txHash)).toEqual(['transaction.failed']);
    expect(await eventsOf(bump.txHash)).toEqual(['transaction.completed']);
    // Final: a replaced send never lands afterwards.
    await expect(
      services.db.transaction((tx) => transitionChainSend(store, lifecycles, tx, stored, 'confirmed', at)),
    ).rejects.toBeInstanceOf(IllegalTransition);
  });

  it('lets a send be replaced by one other only (a later bump replaces the replacement)', async () => {
    const original = await send({ nonce: 8n });
    const first = await send({ nonce: 8n, replaces: original.id });
    await expect(send({ nonce: 8n, replaces: original.id })).rejects.toThrow();
    const second = await send({ nonce: 8n, replaces: first.id });
    expect(second.replaces).toBe(first.id);
  });

  it('keeps a Solana send unreplaceable: it has no nonce, so its table has no such move', async () => {
    expect(isLegal(CHAIN_SEND, 'pending', 'replaced')).toBe(false);
    const wallet = await services.solanaWallets.walletOf(alice);
    const pending = await insertTransfer(services.db, {
      userId: alice.userId,
      environment: 'sandbox',
      network: 'devnet',
      kind: 'native',
      fromAddress: wallet.address,
      toAddress: wallet.address,
      amountRaw: 1n,
      decimals: 9,
      txHash: `test-${crypto.randomUUID()}`,
      wire: '',
      validThroughHeight: 0n,
      status: 'pending',
    });
    await expect(
      services.db.transaction((tx) => transitionSolanaSend(tx, pending, 'replaced', new Date())),
    ).rejects.toBeInstanceOf(IllegalTransition);
    await services.db.transaction((tx) => transitionSolanaSend(tx, pending, 'failed', new Date(), { error: 'test' }));
  });

  it("gives each family's store its own rows only, even under the same transaction hash", async () => {
    const hash = `shared-${crypto.randomUUID()}`;
    const other = await send({ txHash: hash });
    const wallet = await services.solanaWallets.walletOf(alice);
    const solana = await insertTransfer(services.db, {
      userId: alice.userId,
      environment: 'sandbox',
      network: 'devnet',
      kind: 'native',
      fromAddress: wallet.address,
      toAddress: wallet.address,
      amountRaw: 1n,
      decimals: 9,
      txHash: hash,
      wire: '',
      validThroughHeight: 0n,
      status: 'pending',
    });
    expect((await transferStore.findPendingByHash(services.db, hash))?.id).toBe(solana.id);
    expect((await store.findPendingByHash(services.db, hash))?.id).toBe(other.id);
    expect(await transferStore.findTransfer(services.db, other.id)).toBeUndefined();
    expect((await transferStore.findOwnedByHash(services.db, alice, hash))?.family).toBe('solana');
    const listed = await transferStore.listOwned(services.db, alice, 100);
    expect(listed.every((row) => row.family === 'solana')).toBe(true);
    expect(listed.map((row) => row.id)).toContain(solana.id);
    // The graph's lists and lookups of Solana sends read the same table with the same filter.
    const page = await services.accountLists.solanaTransfers(alice, {
      size: 100,
      direction: 'forward',
      from: undefined,
    });
    expect(page.page.items.map((item) => item.row.family)).not.toContain(family);
    expect(page.page.items.map((item) => item.row.id)).toContain(solana.id);
    await services.db.transaction((tx) => transitionSolanaSend(tx, solana, 'failed', new Date(), { error: 'test' }));
    await services.db
      .update(chainSends)
      .set({ status: 'failed' })
      .where(and(eq(chainSends.family, family), eq(chainSends.txHash, hash)));
  });
});

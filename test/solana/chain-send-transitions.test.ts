import { Keypair } from '@solana/web3.js';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationTransitions } from '../../src/db/lifecycle-schema.js';
import { events, jobs } from '../../src/db/schema.js';
import { chainSends } from '../../src/db/chain-schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { CHAIN_SEND, SWAP, transitionChainSend } from '../../src/domain/solana/chain-sends.js';
import { IllegalTransition, isLegal } from '../../src/domain/lifecycle/transition.js';
import { insertTransfer, type SolanaTransferRow, transferStore } from '../../src/domain/solana/transfer-store.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';

/** Chain sends and swaps move only along their tables, once, with a history row and the move's event. */
describe('chain-send and swap state tables', () => {
  let services: Services;
  let alice: Principal;
  beforeAll(async () => {
    services = await createTestServices();
    alice = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(alice, { network: 'devnet' });
  });
  afterAll(() => undefined);

  const historyOf = (kind: string, id: string) =>
    services.db
      .select()
      .from(operationTransitions)
      .where(and(eq(operationTransitions.kind, kind), eq(operationTransitions.operationId, id)));

  /** A pending send stored as the transfer service stores one (not sent: nothing moves it but the test). */
  const pendingSend = async (kind: 'native' | 'swap'): Promise<SolanaTransferRow> => {
    const wallet = await services.solanaWallets.walletOf(alice);
    return insertTransfer(services.db, {
      userId: alice.userId,
      environment: 'sandbox',
      network: 'devnet',
      kind,
      fromAddress: wallet.address,
      toAddress: Keypair.generate().publicKey.toBase58(),
      asset: null,
      amountRaw: 1_000n,
      decimals: 9,
      txHash: `test-${crypto.randomUUID()}`,
      wire: '',
      validThroughHeight: 0n,
      status: 'pending',
    });
  };

  it('lists pending → confirmed | failed only, each move with its transaction event', () => {
    for (const lifecycle of [CHAIN_SEND, SWAP]) {
      expect(lifecycle.moves.pending).toEqual({
        confirmed: ['transaction.completed'],
        failed: ['transaction.failed'],
      });
      expect(isLegal(lifecycle, 'confirmed', 'failed')).toBe(false);
      expect(isLegal(lifecycle, 'failed', 'pending')).toBe(false);
    }
    expect([CHAIN_SEND.kind, SWAP.kind]).toEqual(['chain_send', 'swap']);
  });

  it('confirms a sandbox transfer by its move: history row, transaction.completed, confirmation job dropped', async () => {
    const sent = await services.solanaTransfers.transferSol(
      alice,
      { to: Keypair.generate().publicKey.toBase58(), amount: '0.01', network: 'devnet' },
      `chain-send-${crypto.randomUUID()}`,
    );
    expect(sent.status).toBe('confirmed');
    const history = await historyOf('chain_send', sent.id);
    expect(history.map((h) => [h.fromStatus, h.toStatus])).toEqual([['pending', 'confirmed']]);
    const told = await services.db
      .select()
      .from(events)
      .where(and(eq(events.userId, alice.userId), eq(events.type, 'transaction.completed')));
    expect(told.filter((e) => (e.data as Record<string, unknown>)['signature'] === sent.signature)).toHaveLength(1);
    expect(await services.db.select().from(jobs).where(eq(jobs.id, sent.id))).toEqual([]);
  });

  it('of racing moves of one send exactly one wins, with one history row and one event', async () => {
    const pending = await pendingSend('native');
    const at = new Date();
    const racing = await Promise.all(
      (['confirmed', 'failed', 'confirmed', 'failed'] as const).map((to) =>
        services.db.transaction((tx) =>
          transitionChainSend(tx, pending, to, at, { error: to === 'failed' ? 'refused' : null }),
        ),
      ),
    );
    const winners = racing.filter((row) => row !== undefined);
    expect(winners).toHaveLength(1);
    const won = winners[0]!.status;
    expect((await transferStore.findTransfer(services.db, pending.id))!.status).toBe(won);
    const history = await historyOf('chain_send', pending.id);
    expect(history.map((h) => [h.fromStatus, h.toStatus])).toEqual([['pending', won]]);
    const told = await services.db
      .select()
      .from(events)
      .where(
        and(
          eq(events.userId, alice.userId),
          eq(events.type, `transaction.${won === 'confirmed' ? 'completed' : 'failed'}`),
        ),
      );
    expect(told.filter((e) => (e.data as Record<string, unknown>)['signature'] === pending.txHash)).toHaveLength(1);
  });

  it('refuses a move out of a final state before writing anything; a swap moves under its own kind', async () => {
    const swap = await pendingSend('swap');
    const confirmed = await services.db.transaction((tx) => transitionChainSend(tx, swap, 'confirmed', new Date()));
    expect(confirmed?.status).toBe('confirmed');
    await expect(
      services.db.transaction((tx) => transitionChainSend(tx, confirmed!, 'failed', new Date())),
    ).rejects.toBeInstanceOf(IllegalTransition);
    expect((await historyOf('swap', swap.id)).map((h) => [h.fromStatus, h.toStatus])).toEqual([
      ['pending', 'confirmed'],
    ]);
    expect(await historyOf('chain_send', swap.id)).toEqual([]);
    expect((await transferStore.findTransfer(services.db, swap.id))!.status).toBe('confirmed');
    // A confirmed swap the chain never ran is a market-maker balance break for every reconciliation
    // test that shares this embedded database: the row goes once it has been checked.
    await services.db.delete(chainSends).where(eq(chainSends.id, swap.id));
  });
});

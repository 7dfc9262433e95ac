import { address, getBase58Decoder } from '@solana/kit';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { and, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationTransitions } from '../../src/db/lifecycle-schema.js';
import { events } from '../../src/db/schema.js';
import { chainSends } from '../../src/db/chain-schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { TransactionRejected } from '../../src/domain/solana/chain.js';
import type { SolanaWalletRow } from '../../src/domain/solana/custodial-wallets.js';
import { OTHER_SCALE_MAX_AGE_MS, SIGNATURE_FEE } from '../../src/domain/solana/transfer-service.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';
import { storePendingSolSend } from '../helpers/solana-sends.js';

const SOL = 1_000_000_000n;
/** What litesvm's standing clock gave a blockhash before sandbox blockhashes followed the clock: slot 0 + 150. */
const OLD_SCALE_HEIGHT = 150n;
const AMOUNT = SOL / 10n;

/**
 * Sandbox sends stored pending before blockhashes followed the clock carry a lastValidBlockHeight
 * of litesvm's standing slot, billions below the clock's: the height says nothing about them, so
 * they are judged by the chain's word and their age, and money stays exact either way.
 */
describe('sandbox sends stored with a block height on the earlier scale', () => {
  let services: Services;
  let alice: Principal;
  let wallet: SolanaWalletRow;
  beforeAll(async () => {
    services = await createTestServices();
    alice = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(alice, { network: 'devnet', asset: 'SOL', amount: '2' });
    wallet = await services.solanaWallets.walletOf(alice);
  });

  const lamportsOf = (owner: string) =>
    services.sandboxChains.read('devnet', (svm) => svm.getBalance(address(owner)) ?? 0n);

  /** What the wallet's pending sends hold, as the send path counts it. */
  const held = async () => {
    const [row] = await services.db
      .select({
        sol: sql<string>`(coalesce(sum(${chainSends.amountRaw}), 0) + coalesce(sum(${chainSends.feeRaw}), 0))::text`,
      })
      .from(chainSends)
      .where(and(eq(chainSends.fromAddress, wallet.address), eq(chainSends.status, 'pending')));
    return BigInt(row!.sol);
  };

  /** A SOL send signed by alice's custodial wallet with the given blockhash. */
  const signedSend = async (blockhash: string, to: PublicKey) => {
    const owner = new PublicKey(wallet.address);
    const transaction = new Transaction({ feePayer: owner, blockhash, lastValidBlockHeight: 0 }).add(
      SystemProgram.transfer({ fromPubkey: owner, toPubkey: to, lamports: AMOUNT }),
    );
    transaction.addSignature(
      owner,
      Buffer.from(await services.solanaWallets.sign(wallet, transaction.serializeMessage())),
    );
    return {
      wire: transaction.serialize({ verifySignatures: false }),
      signature: getBase58Decoder().decode(transaction.signatures[0]!.signature!),
    };
  };

  /** The send as the earlier code stored it: pending, its height on litesvm's scale, created `ageMs` ago. */
  const storedPending = (send: { wire: Uint8Array; signature: string }, to: PublicKey, ageMs: number) =>
    storePendingSolSend(
      services.db,
      { ...send, userId: alice.userId, from: wallet.address, to: to.toBase58(), amountRaw: AMOUNT },
      { validThroughHeight: OLD_SCALE_HEIGHT, createdAt: new Date(Date.now() - ageMs) },
    );

  const eventsOf = async (signature: string) =>
    (await services.db.select().from(events).where(eq(events.userId, alice.userId)))
      .filter((e) => (e.data as Record<string, unknown>)['signature'] === signature)
      .map((e) => e.type)
      .sort();
  const historyOf = async (id: string) =>
    (await services.db.select().from(operationTransitions).where(eq(operationTransitions.operationId, id))).map((h) => [
      h.fromStatus,
      h.toStatus,
    ]);
  const statusOf = async (id: string) =>
    (await services.db.select().from(chainSends).where(eq(chainSends.id, id)))[0]!.status;

  it('settles one that landed as confirmed, whatever its height: its hold is spent on the chain, not released', async () => {
    const to = Keypair.generate().publicKey;
    const before = await lamportsOf(wallet.address);
    // It ran on the chain (just before the deploy) while its record stayed pending.
    const send = await signedSend(services.sandboxChains.blockhashes.latest('devnet').blockhash, to);
    await services.sandboxChains.change('devnet', (chain) => {
      chain.run(send.wire);
      return async () => undefined;
    });
    const row = await storedPending(send, to, 2 * OTHER_SCALE_MAX_AGE_MS);
    expect(await held()).toBe(AMOUNT + SIGNATURE_FEE);

    expect(await services.solanaTransfers.confirm(row.id)).toBe('final');
    expect(await statusOf(row.id)).toBe('confirmed');
    expect(await historyOf(row.id)).toEqual([['pending', 'confirmed']]);
    expect(await eventsOf(send.signature)).toEqual(['transaction.completed']);
    // Exact: the chain moved the amount and the fee once; nothing is held for it any more.
    expect(await lamportsOf(wallet.address)).toBe(before - AMOUNT - SIGNATURE_FEE);
    expect(await lamportsOf(to.toBase58())).toBe(AMOUNT);
    expect(await held()).toBe(0n);
    expect(await services.solanaTransfers.confirm(row.id)).toBe('final');
    expect(await eventsOf(send.signature)).toEqual(['transaction.completed']);
  });

  it('keeps one that did not land pending while its sender may still be sending it, then fails it once and releases its hold', async () => {
    const to = Keypair.generate().publicKey;
    const before = await lamportsOf(wallet.address);
    // Signed with litesvm's own blockhash, as the earlier code did: this chain no longer accepts it.
    const stale = await services.sandboxChains.readFixed('devnet', (svm) => svm.latestBlockhash());
    const send = await signedSend(stale, to);
    const row = await storedPending(send, to, 0);

    // Just stored (an instance on the earlier code may be sending it): its height is no reason to fail it.
    expect(await services.solanaTransfers.confirm(row.id)).toBe('pending');
    expect(await statusOf(row.id)).toBe('pending');
    expect(await held()).toBe(AMOUNT + SIGNATURE_FEE);

    // Older than its sender's lease and a blockhash's lifetime, unknown to the chain: it never landed.
    const past = new Date(Date.now() - OTHER_SCALE_MAX_AGE_MS - 1_000);
    await services.db.update(chainSends).set({ createdAt: past }).where(eq(chainSends.id, row.id));
    expect(await services.solanaTransfers.confirm(row.id)).toBe('final');
    const failed = (await services.db.select().from(chainSends).where(eq(chainSends.id, row.id)))[0]!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^Expired/);
    expect(await held()).toBe(0n);
    expect(await historyOf(row.id)).toEqual([['pending', 'failed']]);
    expect(await eventsOf(send.signature)).toEqual(['transaction.failed']);
    // Once: another pass changes nothing; the chain refuses the transaction, so nothing ever moved.
    expect(await services.solanaTransfers.confirm(row.id)).toBe('final');
    expect(await eventsOf(send.signature)).toEqual(['transaction.failed']);
    const chain = services.solanaChains.chainFor('sandbox', 'devnet');
    await expect(chain.sendTransaction(send.wire)).rejects.toBeInstanceOf(TransactionRejected);
    expect(await lamportsOf(wallet.address)).toBe(before);
    expect(await lamportsOf(to.toBase58())).toBe(0n);
  });

  it('still judges a send on the current scale by its height', async () => {
    const to = Keypair.generate().publicKey;
    const stale = await services.sandboxChains.readFixed('devnet', (svm) => svm.latestBlockhash());
    const send = await signedSend(stale, to);
    const row = await storedPending(send, to, 0);
    // Current scale, one slot past: expired at once, whatever its age.
    const height = services.sandboxChains.blockhashes.slot();
    await services.db
      .update(chainSends)
      .set({ validThroughHeight: height - 1n })
      .where(eq(chainSends.id, row.id));
    expect(await services.solanaTransfers.confirm(row.id)).toBe('final');
    expect(await statusOf(row.id)).toBe('failed');
    expect(await eventsOf(send.signature)).toEqual(['transaction.failed']);
  });
});

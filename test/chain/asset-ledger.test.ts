import { address } from '@solana/kit';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { type Executor, queryRows } from '../../src/db/client.js';
import { assetLedger, systemAccount, userAccount } from '../../src/domain/assets/asset-ledger.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { ManualClock } from '../../src/domain/clock.js';
import { assetLedgerSource } from '../../src/domain/reconciliation/asset-ledger-source.js';
import { Reconciliation } from '../../src/domain/reconciliation/reconciliation-service.js';
import { SandboxChainStore } from '../../src/domain/solana/sandbox-chain-store.js';
import { sandboxLedgerBalances } from '../../src/domain/solana/sandbox-ledger-balances.js';
import { airdrop, createSandboxWorld, SOL_MINT, tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';
import { RECONCILIATION_SETTINGS } from '../helpers/reconciliation.js';

const NETWORK = 'devnet';
const SOL = 1_000_000_000n;
const USDC = tokenBySymbol('USDC')!.address;
const BONK = tokenBySymbol('BONK')!.address;
const DAY = '2026-06-01';

/**
 * The asset ledger against the sandbox chain: every movement of a custodial wallet (sends, swaps,
 * faucet grants, arrivals from custodial and outside wallets, fees and rent) posts in the chain's
 * commit, so after a burst of all of them at once the two agree to the base unit.
 */
describe('asset ledger: holds of chain sends, reconciled with the sandbox chain', () => {
  let services: Services;
  let recon: Reconciliation;
  let users: Principal[];
  let addresses: string[];
  const provider = `solana-${NETWORK}-asset-ledger`;

  beforeAll(async () => {
    services = await createTestServices();
    recon = new Reconciliation(
      services.db,
      new ManualClock(new Date('2026-06-02T03:00:00.000Z')),
      [assetLedgerSource(sandboxLedgerBalances(services.sandboxChains, NETWORK))],
      RECONCILIATION_SETTINGS,
    );
    users = await Promise.all(Array.from({ length: 4 }, () => sandboxPrincipal(services)));
    addresses = await Promise.all(users.map(async (u) => (await services.solanaWallets.walletOf(u)).address));
    for (const user of users) await services.sandboxFaucet.fund(user, { network: NETWORK });
  });

  /** This file's wallets' breaks only: files of a worker share the database. */
  const ownBreaks = async () =>
    (await recon.breaks({ open: true })).filter(
      (b) => b.provider === provider && addresses.some((a) => b.reference.includes(a)),
    );
  const reconcile = async () => {
    const run = await recon.run({ environment: 'sandbox', date: DAY, trigger: 'manual' });
    return { run, breaks: await ownBreaks() };
  };
  const balances = (user: Principal, assets: string[]) =>
    assetLedger.balances(
      services.db,
      { environment: 'sandbox', family: 'solana', network: NETWORK },
      user.userId,
      assets,
    );
  const lamports = (owner: string) =>
    services.sandboxChains.read(NETWORK, (svm) => svm.getBalance(address(owner)) ?? 0n);

  /** A transfer into a custodial wallet from a wallet the gateway does not hold. */
  const fromOutside = async (to: string, raw: bigint) => {
    const outsider = Keypair.generate();
    await services.sandboxChains.change(NETWORK, (chain) => {
      airdrop(chain, outsider.publicKey, SOL, true);
      return async () => undefined;
    });
    const transfer = new Transaction({
      feePayer: outsider.publicKey,
      blockhash: services.sandboxChains.blockhashes.latest(NETWORK).blockhash,
      lastValidBlockHeight: 0,
    }).add(SystemProgram.transfer({ fromPubkey: outsider.publicKey, toPubkey: new PublicKey(to), lamports: raw }));
    transfer.sign(outsider);
    await services.solanaChains.chainFor('sandbox', NETWORK).sendTransaction(transfer.serialize());
  };

  it('a send holds its amount and the SOL fee at its cap, and the capture takes what the chain took', async () => {
    const [alice] = users;
    const before = await balances(alice!, [SOL_MINT, USDC]);
    // The recipient has no USDC account: the cap includes its rent, which the chain charges.
    const sent = await services.solanaTransfers.transferToken(
      alice!,
      { to: Keypair.generate().publicKey.toBase58(), tokenMintAddress: USDC, amount: '2.5', network: NETWORK },
      undefined,
    );
    expect(sent.status).toBe('confirmed');
    const after = await balances(alice!, [SOL_MINT, USDC]);
    expect(after.get(USDC)).toMatchObject({ available: before.get(USDC)!.available - 2_500_000n, held: 0n });
    expect(after.get(SOL_MINT)!.held).toBe(0n);
    // Exactly what left the wallet on chain: the fee and the new account's rent, no more.
    expect(after.get(SOL_MINT)!.available).toBe(await lamports(addresses[0]!));
    const [hold] = await queryRows<{ status: string; count: number }>(
      services.db,
      sql`select status, count(*)::int as count from asset_holds where tx_hash = ${sent.signature} group by status`,
    );
    expect(hold).toEqual({ status: 'captured', count: 2 });
  });

  it('refuses with 400 naming what is spendable: the ledger less what pending sends hold', async () => {
    const [, bob] = users;
    const spendable = (await balances(bob!, [SOL_MINT])).get(SOL_MINT)!.available;
    const outcome = services.solanaTransfers.transferSol(
      bob!,
      { to: Keypair.generate().publicKey.toBase58(), amount: '3', network: NETWORK },
      undefined,
    );
    await expect(outcome).rejects.toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      message: expect.stringContaining(`${Number(spendable) / 1e9} available`),
    });
  });

  it('after a burst of concurrent sends, swaps, faucet grants and arrivals the ledger and the chain agree: 0 breaks', async () => {
    const stranger = Keypair.generate().publicKey.toBase58();
    const swap = async (user: Principal, inputMint: string, outputMint: string, amount: string) => {
      const quote = await services.solanaExchange.quote(user, { inputMint, outputMint, amount, network: NETWORK });
      return services.solanaExchange.swap(user, { quoteId: quote.quoteId }, undefined);
    };
    const work: Array<Promise<unknown>> = [];
    users.forEach((user, i) => {
      const next = addresses[(i + 1) % addresses.length]!;
      for (let k = 0; k < 3; k++) {
        work.push(
          services.solanaTransfers.transferSol(user, { to: next, amount: '0.05', network: NETWORK }, undefined),
        );
        work.push(
          services.solanaTransfers.transferToken(
            user,
            { to: k === 0 ? stranger : next, tokenMintAddress: USDC, amount: '1.5', network: NETWORK },
            undefined,
          ),
        );
      }
      work.push(swap(user, SOL_MINT, USDC, '0.1'));
      work.push(swap(user, BONK, SOL_MINT, '100000'));
      work.push(services.sandboxFaucet.fund(user, { network: NETWORK, asset: 'BONK', amount: '5' }));
      work.push(fromOutside(addresses[i]!, 1_234n));
      // More than it has: one of the two is refused, never both landing.
      work.push(
        services.solanaTransfers.transferSol(user, { to: stranger, amount: '0.9', network: NETWORK }, undefined),
      );
    });
    const settled = await Promise.allSettled(work);
    const refused = settled.filter((s) => s.status === 'rejected') as PromiseRejectedResult[];
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(settled.filter((s) => s.status === 'fulfilled').length).toBeGreaterThan(work.length - users.length * 2);

    const { run, breaks } = await reconcile();
    expect(breaks).toEqual([]);
    expect(run.sources[0]).toMatchObject({ provider });
    // Nothing is left held: every sandbox send landed (captured) or was refused (released or never placed).
    for (const [i, user] of users.entries()) {
      const now = await balances(user, [SOL_MINT, USDC, BONK]);
      for (const figure of now.values()) expect(figure.held).toBe(0n);
      expect(now.get(SOL_MINT)!.available).toBe(await lamports(addresses[i]!));
      // The portfolio reads the ledger, and agrees with the chain.
      const portfolio = await services.solanaPortfolio.portfolio(user, NETWORK);
      expect(portfolio.sol.amountRaw).toBe(await lamports(addresses[i]!));
      const onChain = await services.solanaChains.chainFor('sandbox', NETWORK).tokenHoldings(addresses[i]!);
      expect(portfolio.tokens.map((t) => [t.mint, t.amountRaw]).sort()).toEqual(
        onChain.map((h) => [h.mint, h.amountRaw]).sort(),
      );
    }
    // Double entry: every asset's entries sum to zero.
    for (const asset of [SOL_MINT, USDC, BONK])
      expect(
        await assetLedger.totalOf(services.db, { environment: 'sandbox', family: 'solana', network: NETWORK, asset }),
      ).toBe(0n);
  });

  it('a movement that bypassed the ledger is balance_differs with both figures; posted, it clears', async () => {
    // A store without the ledger's hook: what it runs reaches the chain and not the ledger.
    const bypass = new SandboxChainStore(services.db, createSandboxWorld);
    await bypass.change(NETWORK, (chain) => {
      airdrop(chain, new PublicKey(addresses[3]!), 1_234n, true);
      return async () => undefined;
    });
    const { breaks } = await reconcile();
    expect(breaks.map((b) => [b.kind, b.reference])).toEqual([
      ['balance_differs', `asset-ledger:${NETWORK}:${addresses[3]}:${SOL_MINT}`],
    ]);
    expect(BigInt(breaks[0]!.theirAmount!) - BigInt(breaks[0]!.ourAmount!)).toBe(1_234n);
    // Balances are the ledger's: what bypassed it is not spendable until it is posted.
    expect((await services.solanaPortfolio.solBalance(users[3]!, NETWORK)).amountRaw).toBe(
      (await lamports(addresses[3]!)) - 1_234n,
    );

    // Corrected by a posting (what an operator does after finding the movement), the next run clears it.
    const place = { environment: 'sandbox' as const, family: 'solana', network: NETWORK, asset: SOL_MINT };
    await services.db.transaction((tx) =>
      assetLedger.post(tx, {
        environment: 'sandbox',
        kind: 'correction',
        reference: `test:${addresses[3]}`,
        lines: [
          { account: { ...place, userId: users[3]!.userId, address: addresses[3]!, code: 'wallet' }, amount: 1_234n },
          { account: { ...place, userId: null, code: 'external' }, amount: -1_234n },
        ],
      }),
    );
    expect((await reconcile()).breaks).toEqual([]);
  });

  /** A user whose wallet holds 1 SOL on the chain from before the ledger existed: none of it in the ledger. */
  async function walletOlderThanTheLedger() {
    const elder = await sandboxPrincipal(services);
    const elderAddress = (await services.solanaWallets.walletOf(elder)).address;
    addresses.push(elderAddress);
    // Airdropped past the store that posts (onEffects unset): on the chain, not in the ledger.
    await new SandboxChainStore(services.db, createSandboxWorld).change(NETWORK, (chain) => {
      airdrop(chain, new PublicKey(elderAddress), SOL, true);
      return async () => undefined;
    });
    return { elder, elderAddress };
  }

  it('a wallet older than the ledger is shown as the chain has it, and opened at the chain figure by its first send, once', async () => {
    const { elder, elderAddress } = await walletOlderThanTheLedger();
    expect((await services.solanaPortfolio.solBalance(elder, NETWORK)).amountRaw).toBe(SOL);
    const to = Keypair.generate().publicKey.toBase58();
    const sends = await Promise.all(
      [1, 2].map(() => services.solanaTransfers.transferSol(elder, { to, amount: '0.1', network: NETWORK }, undefined)),
    );
    expect(sends.map((s) => s.status)).toEqual(['confirmed', 'confirmed']);
    const figure = (await balances(elder, [SOL_MINT])).get(SOL_MINT)!;
    expect(figure).toEqual({ available: await lamports(elderAddress), held: 0n, known: true });
    const [openings] = await queryRows<{ count: number }>(
      services.db,
      sql`select count(*)::int as count from asset_postings where kind = 'opening' and reference like ${`%${elderAddress}%`}`,
    );
    expect(openings!.count).toBe(1);
    expect((await reconcile()).breaks).toEqual([]);
  });
  it('a wallet older than the ledger moved first by a faucet grant is opened at the chain figure from before it, and spends that money', async () => {
    const { elder, elderAddress } = await walletOlderThanTheLedger();
    // Its first movement is a credit, not a send: the grant alone would leave the ledger a SOL short.
    await services.sandboxFaucet.fund(elder, { network: NETWORK, asset: 'SOL', amount: '0.5' });
    expect(await lamports(elderAddress)).toBe(SOL + SOL / 2n);
    expect((await balances(elder, [SOL_MINT])).get(SOL_MINT)).toEqual({
      available: SOL + SOL / 2n,
      held: 0n,
      known: true,
    });
    expect((await services.solanaPortfolio.solBalance(elder, NETWORK)).amountRaw).toBe(SOL + SOL / 2n);
    expect((await reconcile()).breaks).toEqual([]);

    // More than the grant: only the money from before the ledger covers it.
    const quote = await services.solanaExchange.quote(elder, {
      inputMint: SOL_MINT,
      outputMint: USDC,
      amount: '0.8',
      network: NETWORK,
    });
    await services.solanaExchange.swap(elder, { quoteId: quote.quoteId }, undefined);
    const sent = await services.solanaTransfers.transferSol(
      elder,
      { to: Keypair.generate().publicKey.toBase58(), amount: '0.6', network: NETWORK },
      undefined,
    );
    expect(sent.status).toBe('confirmed');
    const after = await balances(elder, [SOL_MINT, USDC]);
    expect(after.get(SOL_MINT)).toEqual({ available: await lamports(elderAddress), held: 0n, known: true });
    expect(after.get(USDC)!.available).toBeGreaterThan(0n);
    const [openings] = await queryRows<{ count: number }>(
      services.db,
      sql`select count(*)::int as count from asset_postings where kind = 'opening' and reference = ${`${NETWORK}:${elderAddress}:${SOL_MINT}`}`,
    );
    expect(openings!.count).toBe(1);
    expect((await reconcile()).breaks).toEqual([]);
  });
  it('a debit landing between the hold’s read and its update is a 400 naming what is spendable now, not a 500', async () => {
    const user = await sandboxPrincipal(services);
    const owner = { userId: user.userId, address: (await services.solanaWallets.walletOf(user)).address };
    await services.sandboxFaucet.fund(user, { network: NETWORK, asset: 'SOL', amount: '1' });
    const place = { environment: 'sandbox' as const, family: 'solana', network: NETWORK, asset: SOL_MINT };
    const read = assetLedger.balances.bind(assetLedger);
    // The hold reads the balances unlocked; right after that read, another debit (a swap's commit)
    // takes 0.8 SOL of the wallet, before the hold's guarded update.
    const spy = vi.spyOn(assetLedger, 'balances').mockImplementationOnce(async (db: Executor, ...rest) => {
      const figures = await read(db, ...rest);
      await assetLedger.post(db as Parameters<typeof assetLedger.post>[0], {
        environment: 'sandbox',
        kind: 'test-debit',
        reference: `race:${owner.address}`,
        lines: [
          { account: userAccount(place, owner, 'wallet'), amount: -800_000_000n },
          { account: systemAccount(place, 'external'), amount: 800_000_000n },
        ],
      });
      return figures;
    });
    try {
      const sent = services.solanaTransfers.transferSol(
        user,
        { to: Keypair.generate().publicKey.toBase58(), amount: '0.5', network: NETWORK },
        undefined,
      );
      await expect(sent).rejects.toMatchObject({
        code: 'INSUFFICIENT_FUNDS',
        message: expect.stringContaining('0.2 available'),
      });
    } finally {
      spy.mockRestore();
    }
    // Refused as a whole: nothing held, the wallet as the chain has it.
    expect((await balances(user, [SOL_MINT])).get(SOL_MINT)).toEqual({
      available: await lamports(owner.address),
      held: 0n,
      known: true,
    });
  });
});

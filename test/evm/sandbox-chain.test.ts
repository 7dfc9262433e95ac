import { sql } from 'drizzle-orm';
import { type Hex, hexToBytes } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { TransactionRejected } from '../../src/domain/chain/chain-adapter.js';
import { sandboxEvmChains } from '../../src/domain/evm/sandbox-chains.js';
import { baseFeeOf } from '../../src/domain/evm/sandbox-fees.js';
import { isolatedTestDatabase, onPostgres } from '../helpers/database.js';
import { waitUntil } from '../helpers/wait.js';
import { addressTopic, newSigner, TRANSFER_TOPIC, transferData, ZERO_TOPIC } from './sandbox-signing.js';

const ETH = 10n ** 18n;
const USDC = 1_000_000n;

describe('the sandbox EVM chain', () => {
  let handle: DatabaseHandle;
  // A database of the file's own on PostgreSQL: pausing a network's mempool holds everyone's sends there.
  beforeAll(async () => {
    handle = await isolatedTestDatabase();
  });
  afterAll(async () => {
    if (onPostgres) await handle.close();
  });

  it('the faucet credits native coin and mints tokens (a Transfer from address 0)', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('base');
    const who = newSigner();
    await chain.faucet(who.address, { native: true }, 2n * ETH);
    const minted = await chain.faucet(who.address, { token: 'usdc' }, 25n * USDC);
    expect(await chain.nativeBalance(who.address)).toBe(2n * ETH);
    const usdc = chain.tokenAddress('USDC');
    expect(await chain.tokenBalance(who.address, usdc)).toBe(25n * USDC);
    const receipt = await chain.receipt(minted);
    expect(receipt?.status).toBe('success');
    expect(receipt?.logs).toEqual([
      expect.objectContaining({
        address: usdc.toLowerCase(),
        topics: [TRANSFER_TOPIC, ZERO_TOPIC, addressTopic(who.address)],
      }),
    ]);
    // BNB Smart Chain's USDC has 18 decimals, as the real one.
    const bnb = sandboxEvmChains(handle.db).chainFor('bnb-smart-chain');
    const decimals = await bnb.call({ to: bnb.tokenAddress('USDC'), data: hexToBytes('0x313ce567') });
    expect(BigInt(`0x${Buffer.from(decimals).toString('hex')}`)).toBe(18n);
  });

  it('an ERC-20 transfer signed with viem moves balances, emits Transfer, and pays gas and the data fee', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('base');
    const [alice, bob] = [newSigner(), newSigner()];
    await chain.faucet(alice.address, { native: true }, ETH);
    await chain.faucet(alice.address, { token: 'USDC' }, 10n * USDC);
    const usdc = chain.tokenAddress('USDC') as Hex;
    const gas = await chain.estimateGas({
      from: alice.address,
      to: usdc,
      data: hexToBytes(transferData(bob.address, 4n * USDC)),
    });
    expect(gas).toBeGreaterThan(21_000n);
    const signed = await alice.sign(chain, { to: usdc, data: transferData(bob.address, 4n * USDC), gas });
    const hash = await chain.sendRaw(signed);

    expect(await chain.txState(hash)).toEqual({ state: 'confirmed' });
    expect(await chain.tokenBalance(alice.address, usdc)).toBe(6n * USDC);
    expect(await chain.tokenBalance(bob.address, usdc)).toBe(4n * USDC);
    expect(await chain.transactionCount(alice.address)).toBe(1n);
    const receipt = (await chain.receipt(hash))!;
    const dataFee = await chain.dataFee(signed);
    expect(dataFee).toBe(BigInt(signed.length) * 16n * 1_000_000_000n);
    expect(receipt).toMatchObject({ status: 'success', from: alice.address.toLowerCase(), nonce: 0n, dataFee });
    expect(await chain.nativeBalance(alice.address)).toBe(ETH - receipt.gasUsed * receipt.effectiveGasPrice - dataFee);
    const logs = await chain.logs({
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
      address: usdc,
      topics: [TRANSFER_TOPIC, null, addressTopic(bob.address)],
    });
    expect(logs).toEqual([expect.objectContaining({ transactionHash: hash, blockNumber: receipt.blockNumber })]);
    expect(await chain.height()).toBeGreaterThanOrEqual(receipt.blockNumber);

    // Ethereum charges no data fee.
    const l1 = sandboxEvmChains(handle.db).chainFor('ethereum');
    expect(await l1.dataFee(signed)).toBe(0n);
  });

  it('refuses before inclusion what can never land as it is', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('base');
    const [rich, poor] = [newSigner(), newSigner()];
    await chain.faucet(rich.address, { native: true }, ETH);
    const to = newSigner().address;
    const refusal = (signed: Promise<Uint8Array>) =>
      signed
        .then((s) => chain.sendRaw(s))
        .then(
          () => 'accepted',
          (error: unknown) => (error instanceof TransactionRejected ? error.reason : `not a refusal: ${error}`),
        );
    expect(await refusal(rich.sign(chain, { to, value: 1n, nonce: 5 }))).toMatch(/^nonce too high/);
    expect(await refusal(rich.sign(chain, { to, value: 1n, maxFeePerGas: baseFeeOf('base') - 1n }))).toMatch(
      /below the base fee/,
    );
    expect(await refusal(poor.sign(chain, { to, value: 1n }))).toMatch(/^insufficient funds/);
    expect(await refusal(rich.sign(chain, { to, value: 1n, chainId: 1 }))).toMatch(/^invalid transaction/);
    expect(await refusal(rich.sign(chain, { to, value: 1n, gas: 20_000n }))).toMatch(/^intrinsic gas too low/);
    expect(await refusal(Promise.resolve(new Uint8Array([2, 1, 2, 3])))).toMatch(/^invalid transaction/);
    // None of them used a nonce; the one that can land does, and cannot be sent twice.
    expect(await chain.transactionCount(rich.address)).toBe(0n);
    const good = await rich.sign(chain, { to, value: 1n });
    await chain.sendRaw(good);
    expect(await refusal(Promise.resolve(good))).toMatch(/^already known/);
    expect(await refusal(rich.sign(chain, { to, value: 2n, nonce: 0 }))).toMatch(/^nonce too low/);
    expect(await chain.nativeBalance(to)).toBe(1n);
  });

  it('a reverted transfer is included: its receipt says reverted, its nonce is used and its fee spent', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('optimism');
    const alice = newSigner();
    await chain.faucet(alice.address, { native: true }, ETH);
    await chain.faucet(alice.address, { token: 'USDT' }, 3n * USDC);
    const usdt = chain.tokenAddress('USDT') as Hex;
    const signed = await alice.sign(chain, { to: usdt, data: transferData(newSigner().address, 5n * USDC) });
    const hash = await chain.sendRaw(signed);
    const receipt = (await chain.receipt(hash))!;
    expect(receipt.status).toBe('reverted');
    expect(receipt.logs).toEqual([]);
    expect(await chain.txState(hash)).toEqual({
      state: 'failed',
      error: expect.stringMatching(/^reverted: ERC20InsufficientBalance\(/),
    });
    expect(await chain.transactionCount(alice.address)).toBe(1n);
    expect(await chain.tokenBalance(alice.address, usdt)).toBe(3n * USDC);
    expect(receipt.gasUsed).toBeGreaterThan(21_000n);
    expect(await chain.nativeBalance(alice.address)).toBe(
      ETH - receipt.gasUsed * receipt.effectiveGasPrice - (await chain.dataFee(signed)),
    );
    await expect(
      chain.estimateGas({ from: alice.address, to: usdt, data: hexToBytes(transferData(alice.address, 5n * USDC)) }),
    ).rejects.toThrow(/execution reverted: ERC20InsufficientBalance/);
  });

  it('the mempool holds, drops and releases in the order given, across chain objects', async () => {
    const factory = sandboxEvmChains(handle.db);
    const chain = factory.chainFor('polygon');
    const signers = [newSigner(), newSigner(), newSigner()];
    for (const s of signers) await chain.faucet(s.address, { native: true }, ETH);
    const to = newSigner().address;
    await chain.mempool.pause();
    try {
      const [a, b, c] = await Promise.all(
        signers.map(async (s, i) => chain.sendRaw(await s.sign(chain, { to, value: BigInt(i + 1) }))),
      );
      // A second transaction of the first sender queues after its first.
      const a2 = await chain.sendRaw(await signers[0]!.sign(chain, { to, value: 10n, nonce: 1 }));
      const other = sandboxEvmChains(handle.db).chainFor('polygon');
      expect(new Set(await other.mempool.pending())).toEqual(new Set([a, b, c, a2]));
      expect(await chain.txState(a!)).toEqual({ state: 'unknown' });
      // The faucet still works while held (its own block).
      await chain.faucet(to, { native: true }, 100n);
      await other.mempool.drop([b!]);
      await other.mempool.release([a2, c!]);
      const left = await chain.mempool.pending();
      for (const hash of [a, b, c, a2]) expect(left).not.toContain(hash);
      const [ra, ra2, rc] = await Promise.all([a!, a2, c!].map((h) => chain.receipt(h)));
      expect([ra?.status, ra2?.status, rc?.status]).toEqual(['success', 'success', 'success']);
      // a2 was asked for first but needs a's nonce first; c went before both.
      // One block takes all three: a2 waits in the block's first pass and goes in its second.
      expect([ra!.blockNumber, ra2!.blockNumber]).toEqual([rc!.blockNumber, rc!.blockNumber]);
      const order = await queryRows<{ hash: string }>(
        handle.db,
        sql`select hash from evm_sandbox_transactions where network = 'polygon' and hash in (${a}, ${a2}, ${c})
            order by block_number, position`,
      );
      expect(order.map((r) => r.hash)).toEqual([c, a, a2]);
      expect(await chain.txState(b!)).toEqual({ state: 'unknown' });
      expect(await chain.transactionCount(signers[1]!.address)).toBe(0n);
      expect(await chain.nativeBalance(to)).toBe(1n + 3n + 10n + 100n);
    } finally {
      await chain.mempool.release();
    }
  });

  it('a new chain object on the same database (a restart) keeps state and mines a stored transaction once', async () => {
    const before = sandboxEvmChains(handle.db).chainFor('arbitrum-one');
    const alice = newSigner();
    await before.faucet(alice.address, { native: true }, ETH);
    await before.mempool.pause();
    const to = newSigner().address;
    const hash = await before.sendRaw(await alice.sign(before, { to, value: 7n }));
    // As if the instance stopped after storing it, with the mempool not held.
    await handle.db.execute(sql`update evm_sandbox_heads set paused = false where network = 'arbitrum-one'`);

    const after = sandboxEvmChains(handle.db).chainFor('arbitrum-one');
    expect(await after.nativeBalance(alice.address)).toBeGreaterThan(0n);
    await waitUntil(async () => (await after.txState(hash)).state === 'confirmed');
    expect(await after.nativeBalance(to)).toBe(7n);
    // The old object, used again, finds nothing left to mine.
    expect(await before.nativeBalance(to)).toBe(7n);
    const [{ n }] = (await queryRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from evm_sandbox_transactions where network = 'arbitrum-one' and hash = ${hash}`,
    )) as [{ n: number }];
    expect(n).toBe(1);
  });

  it('a gas estimate starts cold, as a transaction does: calls before it leave no slot warm', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('base');
    const [alice, bob] = [newSigner(), newSigner()];
    await chain.faucet(alice.address, { native: true }, ETH);
    await chain.faucet(alice.address, { token: 'USDC' }, 10n * USDC);
    const usdc = chain.tokenAddress('USDC') as Hex;
    const transfer = { from: alice.address, to: usdc, data: hexToBytes(transferData(bob.address, USDC)) };
    const first = await chain.estimateGas(transfer);
    // Reads of the token and of both balances, and the estimate itself, touch every slot it needs.
    await chain.tokenBalance(alice.address, usdc);
    await chain.tokenBalance(bob.address, usdc);
    expect(await chain.estimateGas(transfer)).toBe(first);
    // Signed with exactly the estimate, the transfer lands, burning no more.
    const hash = await chain.sendRaw(
      await alice.sign(chain, { to: usdc, data: transferData(bob.address, USDC), gas: first }),
    );
    const receipt = (await chain.receipt(hash))!;
    expect(receipt.status).toBe('success');
    expect(receipt.gasUsed).toBeLessThanOrEqual(first);
  });

  it("blocks mined faster than one a second share it: the chain's clock never runs ahead of the wall clock", async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('optimism');
    const who = newSigner().address;
    const from = await chain.height();
    // Each faucet grant is a block of its own, mined before it answers: many a second.
    for (let i = 0; i < 40; i++) await chain.faucet(who, { native: true }, 1n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const blocks = await queryRows<{ timestamp: string }>(
      handle.db,
      sql`select timestamp::text as timestamp from evm_sandbox_blocks where network = 'optimism' and number > ${from}
          order by number`,
    );
    expect(blocks.length).toBeGreaterThanOrEqual(40);
    const times = blocks.map((b) => BigInt(b.timestamp));
    for (let i = 1; i < times.length; i++) expect(times[i]! >= times[i - 1]!).toBe(true);
    expect(times.at(-1)! <= now).toBe(true);
  });

  it('wraps native coin in WETH9 and reads it back', async () => {
    const chain = sandboxEvmChains(handle.db).chainFor('base');
    const alice = newSigner();
    await chain.faucet(alice.address, { native: true }, ETH);
    const weth = chain.tokenAddress('WETH') as Hex;
    const hash = await chain.sendRaw(await alice.sign(chain, { to: weth, value: ETH / 4n }));
    expect(await chain.txState(hash)).toEqual({ state: 'confirmed' });
    expect(await chain.tokenBalance(alice.address, weth)).toBe(ETH / 4n);
  });
});

describe('a network nobody used', () => {
  it('reads as empty and creates nothing', async () => {
    const fresh = await openDatabase({ pgliteDataDir: 'memory://' });
    try {
      const chain = sandboxEvmChains(fresh.db).chainFor('scroll');
      const who = newSigner().address;
      expect(await chain.nativeBalance(who)).toBe(0n);
      expect(await chain.tokenBalance(who, chain.tokenAddress('USDC'))).toBe(0n);
      expect(await chain.transactionCount(who)).toBe(0n);
      expect(await chain.height()).toBe(0n);
      expect(await chain.mempool.pending()).toEqual([]);
      expect(await chain.txState(`0x${'ab'.repeat(32)}`)).toEqual({ state: 'unknown' });
      const [counts] = await queryRows<{ heads: number; nodes: number; blocks: number }>(
        fresh.db,
        sql`select (select count(*)::int from evm_sandbox_heads) as heads, (select count(*)::int from evm_sandbox_nodes) as nodes,
              (select count(*)::int from evm_sandbox_blocks) as blocks`,
      );
      expect(counts).toEqual({ heads: 0, nodes: 0, blocks: 0 });
      // Its first use creates it, with the token at the address known beforehand.
      await chain.faucet(who, { token: 'USDC' }, 5n);
      expect(await chain.tokenBalance(who, chain.tokenAddress('USDC'))).toBe(5n);
      expect(await chain.height()).toBe(1n);
    } finally {
      await fresh.close();
    }
  });
});

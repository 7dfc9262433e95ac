import { address, getBase58Decoder } from '@solana/kit';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.js';
import { ManualClock } from '../../src/domain/clock.js';
import { pruneHistory } from '../../src/domain/retention/retention.js';
import {
  BLOCKHASH_MAX_AGE_MS,
  CLOCK_SKEW_SLOTS,
  SandboxBlockhashes,
  SLOT_MS,
} from '../../src/domain/solana/sandbox-blockhash.js';
import { SandboxChainStore } from '../../src/domain/solana/sandbox-chain-store.js';
import { airdrop, createSandboxWorld } from '../../src/domain/solana/sandbox-world.js';
import { isolatedTestDatabase, onPostgres } from '../helpers/database.js';

const SOL = 1_000_000_000n;
const DAY_MS = 86_400_000;

/**
 * A signed sandbox transaction runs once. Its signature record keeps it from running again, but
 * retention prunes those records; the blockhash it carries expires long before, so a copy sent
 * after the record is gone is refused on its age.
 */
describe('sandbox chain: replays after the signature record is pruned', () => {
  let handle: DatabaseHandle;
  // Retention prunes every old signature of the database: a database of the file's own on PostgreSQL.
  beforeAll(async () => {
    handle = await isolatedTestDatabase();
  });
  afterAll(async () => {
    if (onPostgres) await handle.close();
  });

  const setUp = async () => {
    // Signatures are stamped by the database's clock: the test's starts at the same time.
    const clock = new ManualClock(new Date());
    const network = `replay-${Date.now()}-${Math.floor(Math.random() * 1e6)}` as 'devnet';
    const store = () => new SandboxChainStore(handle.db, createSandboxWorld, undefined, clock);
    const first = store();
    const signer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    await first.change(network, (chain) => {
      airdrop(chain, signer.publicKey, 2n * SOL, true);
      return async () => undefined;
    });
    const signed = (blockhash: string, lamports = SOL / 2n) => {
      const transfer = new Transaction({ feePayer: signer.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
        SystemProgram.transfer({ fromPubkey: signer.publicKey, toPubkey: to, lamports }),
      );
      transfer.sign(signer);
      return { wire: transfer.serialize(), signature: getBase58Decoder().decode(transfer.signature!) };
    };
    const run = (s: SandboxChainStore, wire: Uint8Array) =>
      s.change(network, (chain) => {
        chain.run(wire);
        return async () => undefined;
      });
    const received = (s: SandboxChainStore) => s.read(network, (svm) => svm.getBalance(address(to.toBase58())));
    return { clock, network, store, first, signed, run, received };
  };

  it('refuses a copy sent after retention pruned its signature, as an expired blockhash', async () => {
    const { clock, network, store, first, signed, run, received } = await setUp();
    const { wire, signature } = signed(first.blockhashes.latest(network).blockhash);
    await run(first, wire);
    expect(await received(first)).toBe(SOL / 2n);
    await expect(run(first, wire)).rejects.toThrow(/AlreadyProcessed/);

    // A week and a day later retention has pruned the record; a restarted instance no longer knows it.
    clock.advance(8 * DAY_MS);
    const pruned = await pruneHistory(handle.db, clock.now(), {
      eventsDays: 30,
      jobsDays: 7,
      idempotencyHours: 24,
      batchSize: 100,
      sandboxSignaturesDays: 7,
    });
    expect(pruned.sandboxSignatures).toBeGreaterThanOrEqual(2);
    const restarted = store();
    expect(await restarted.executed(network, signature)).toBe(false);

    await expect(run(restarted, wire)).rejects.toThrow(/BlockhashNotFound: .*expired/);
    expect(await received(restarted)).toBe(SOL / 2n);
  });

  it('accepts a blockhash for 150 slots after its own and refuses a new transaction carrying it after that', async () => {
    const { clock, network, first, signed, run, received } = await setUp();
    const { blockhash, lastValidBlockHeight } = first.blockhashes.latest(network);
    expect(lastValidBlockHeight - first.blockhashes.slot()).toBe(150n);
    clock.advance(BLOCKHASH_MAX_AGE_MS - 1_000);
    await run(first, signed(blockhash).wire);
    clock.advance(1_000);
    expect(first.blockhashes.slot()).toBeGreaterThan(lastValidBlockHeight);
    await expect(run(first, signed(blockhash, SOL / 4n).wire)).rejects.toThrow(/BlockhashNotFound/);
    expect(await received(first)).toBe(SOL / 2n);
    // A fresh blockhash runs at once.
    await run(first, signed(first.blockhashes.latest(network).blockhash, SOL / 4n).wire);
    expect(await received(first)).toBe(SOL / 2n + SOL / 4n);
    // Far under the shortest signature retention (a day): a pruned signature's blockhash is long gone.
    expect(BLOCKHASH_MAX_AGE_MS).toBeLessThan(DAY_MS / 100);
  });

  it('accepts a blockhash from an instance whose clock runs up to 10 s ahead, not further', () => {
    const start = new Date();
    const here = new SandboxBlockhashes(new ManualClock(start));
    const ahead = (ms: number) =>
      new SandboxBlockhashes(new ManualClock(new Date(start.getTime() + ms))).latest('devnet').blockhash;
    expect(here.isRecent('devnet', ahead(5_000))).toBe(true);
    expect(here.isRecent('devnet', ahead(Number(CLOCK_SKEW_SLOTS) * SLOT_MS - SLOT_MS))).toBe(true);
    expect(here.isRecent('devnet', ahead(Number(CLOCK_SKEW_SLOTS + 2n) * SLOT_MS))).toBe(false);
    expect(here.isRecent('devnet', ahead(-BLOCKHASH_MAX_AGE_MS - SLOT_MS))).toBe(false);
  });
});

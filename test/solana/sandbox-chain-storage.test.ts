import { deflateSync } from 'node:zlib';
import { address, getBase58Decoder, lamports } from '@solana/kit';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { sql } from 'drizzle-orm';
import { LiteSVM } from 'litesvm';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import { SandboxChainStore } from '../../src/domain/solana/sandbox-chain-store.js';
import { airdrop, createSandboxWorld, upgradeSandboxWorld } from '../../src/domain/solana/sandbox-world.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';

const SOL = 1_000_000_000n;
const FEE = 5_000n;

/** A second instance over the same database: its own services, its own in-memory chains. */
const anotherInstance = (services: Services) =>
  createServices(services.config, services.db, systemClock, () => undefined, new RateLimiter(undefined));

const balance = (services: Services, owner: string) =>
  services.sandboxChains.read('devnet', (svm) => svm.getBalance(address(owner)) ?? 0n);

describe('sandbox chain storage: account rows, one chain for every instance', () => {
  let shared: Services;
  // The worker's database (built by the first file that needs it) can take a while on a busy machine.
  beforeAll(async () => {
    shared = await createTestServices();
  });

  it('a transfer writes the accounts it changed and its signature, not the chain', async () => {
    const services = shared;
    const sender = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(sender, { network: 'devnet', asset: 'SOL', amount: '1' });
    const to = Keypair.generate().publicKey.toBase58();
    const sent = await services.solanaTransfers.transferSol(
      sender,
      { to, amount: '0.01', network: 'devnet' },
      undefined,
    );
    expect(sent.status).toBe('confirmed');
    const [written] = await queryRows<{ version: string }>(
      services.db,
      sql`select version::text as version from solana_sandbox_signatures where network = 'devnet' and signature = ${sent.signature}`,
    );
    const rows = await queryRows<{ address: string; lamports: string }>(
      services.db,
      sql`select address, lamports::text as lamports from solana_sandbox_accounts
          where network = 'devnet' and version = ${written!.version}`,
    );
    const from = (await services.solanaWallets.walletOf(sender)).address;
    // The sender and the receiver: the reference key and the system program did not change.
    expect(rows.map((r) => r.address).sort()).toEqual([from, to].sort());
    expect(rows.find((r) => r.address === to)!.lamports).toBe('10000000');
    const [chain] = await queryRows<{ snapshot: unknown }>(
      services.db,
      sql`select snapshot from solana_sandbox_chains where network = 'devnet'`,
    );
    expect(chain!.snapshot).toBeNull();
  });

  it('builds a chain on first use, not when the services start', async () => {
    const services = anotherInstance(shared);
    expect(services.sandboxChains.loaded()).toEqual([]);
    await services.solanaChains.chainFor('sandbox', 'testnet').lamports(Keypair.generate().publicKey.toBase58());
    expect(services.sandboxChains.loaded()).toEqual(['testnet']);
  });

  it('two instances over one database: a write through one is read by the other, both ways', async () => {
    const a = shared;
    const b = anotherInstance(a);
    const alice = await sandboxPrincipal(a);
    const bob = await sandboxPrincipal(a);
    // Both instances have built the chain before either writes: each must catch up on the other's rows.
    const bobAddress = (await b.solanaWallets.walletOf(bob)).address;
    expect(await balance(a, bobAddress)).toBe(0n);
    expect(await balance(b, bobAddress)).toBe(0n);

    await a.sandboxFaucet.fund(alice, { network: 'devnet', asset: 'SOL', amount: '3' });
    expect((await b.solanaPortfolio.solBalance(alice, 'devnet')).amount).toBe('3');
    const sent = await b.solanaTransfers.transferSol(
      alice,
      { to: bobAddress, amount: '1', network: 'devnet' },
      undefined,
    );
    expect(sent.status).toBe('confirmed');
    expect(await balance(a, bobAddress)).toBe(SOL);
    expect((await a.solanaPortfolio.solBalance(alice, 'devnet')).amountRaw).toBe(2n * SOL - FEE);
    expect(await a.solanaChains.chainFor('sandbox', 'devnet').signatureState(sent.signature)).toEqual({
      state: 'confirmed',
    });
  });

  it('concurrent transfers through two instances: every one lands once, balances exact to the lamport', async () => {
    const a = shared;
    const b = anotherInstance(a);
    const senders = await Promise.all(Array.from({ length: 6 }, () => sandboxPrincipal(a)));
    for (const sender of senders) await a.sandboxFaucet.fund(sender, { network: 'devnet', asset: 'SOL', amount: '1' });
    const to = Keypair.generate().publicKey.toBase58();
    const sends = senders.flatMap((sender, i) =>
      [0, 1, 2].map(() =>
        (i % 2 === 0 ? a : b).solanaTransfers.transferSol(sender, { to, amount: '0.1', network: 'devnet' }, undefined),
      ),
    );
    const results = await Promise.all(sends);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'confirmed'));
    expect(new Set(results.map((r) => r.signature)).size).toBe(18);
    for (const instance of [a, b]) {
      expect(await balance(instance, to)).toBe(18n * (SOL / 10n));
      for (const sender of senders)
        expect((await instance.solanaPortfolio.solBalance(sender, 'devnet')).amountRaw).toBe(
          SOL - 3n * (SOL / 10n + FEE),
        );
    }
    // And a third instance, started afterwards, loads the same chain from the rows.
    const restarted = anotherInstance(a);
    expect(await balance(restarted, to)).toBe(18n * (SOL / 10n));
  });

  it('a transaction runs once: re-sent after a restart (no signature in memory), it is refused and moves nothing', async () => {
    const services = shared;
    const sender = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(sender, { network: 'devnet', asset: 'SOL', amount: '1' });
    const sent = await services.solanaTransfers.transferSol(
      sender,
      { to: Keypair.generate().publicKey.toBase58(), amount: '0.2', network: 'devnet' },
      undefined,
    );
    const [row] = await queryRows<{ wire: string }>(
      services.db,
      sql`select wire from chain_sends where family = 'solana' and tx_hash = ${sent.signature}`,
    );
    const restarted = anotherInstance(services);
    const before = (await restarted.solanaPortfolio.solBalance(sender, 'devnet')).amountRaw;
    await expect(
      restarted.solanaChains.chainFor('sandbox', 'devnet').sendTransaction(Buffer.from(row!.wire, 'base64')),
    ).rejects.toMatchObject({ reason: expect.stringMatching(/already.*processed/i) });
    expect((await restarted.solanaPortfolio.solBalance(sender, 'devnet')).amountRaw).toBe(before);
    expect((await services.solanaPortfolio.solBalance(sender, 'devnet')).amountRaw).toBe(before);
  });

  it('a change whose commit is refused leaves the chain in memory as it was', async () => {
    const services = shared;
    const owner = Keypair.generate().publicKey;
    await expect(
      services.sandboxChains.change('devnet', (chain) => {
        airdrop(chain, owner, SOL, true);
        expect(chain.svm.getBalance(address(owner.toBase58()))).toBe(SOL);
        return async () => {
          throw new Error('refused by the record');
        };
      }),
    ).rejects.toThrow('refused by the record');
    expect(await balance(services, owner.toBase58())).toBe(0n);
    expect(await balance(anotherInstance(services), owner.toBase58())).toBe(0n);
  });

  it('changes waiting together commit together; one refused among them leaves the others landed', async () => {
    const store = new SandboxChainStore(shared.db, createSandboxWorld);
    const owners = Array.from({ length: 5 }, () => Keypair.generate().publicKey);
    const grant = (owner: (typeof owners)[number], refuse = false) =>
      store.change('devnet', (chain) => {
        airdrop(chain, owner, SOL, true);
        return async () => {
          if (refuse) throw new Error('refused by the record');
          return chain.signatures[0]!;
        };
      });
    const signatures = await Promise.all(owners.map((owner) => grant(owner)));
    const versions = await queryRows<{ version: string }>(
      shared.db,
      sql`select distinct version::text as version from solana_sandbox_signatures
          where network = 'devnet' and signature in (${sql.join(
            signatures.map((s) => sql`${s}`),
            sql`, `,
          )})`,
    );
    expect(versions).toHaveLength(1);

    const others = Array.from({ length: 3 }, () => Keypair.generate().publicKey);
    const outcomes = await Promise.allSettled([grant(others[0]!), grant(others[1]!, true), grant(others[2]!)]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const fresh = anotherInstance(shared);
    expect(await balance(fresh, others[0]!.toBase58())).toBe(SOL);
    expect(await balance(fresh, others[1]!.toBase58())).toBe(0n);
    expect(await balance(fresh, others[2]!.toBase58())).toBe(SOL);
    expect(await store.read('devnet', (svm) => svm.getBalance(address(others[1]!.toBase58())) ?? 0n)).toBe(0n);
  });

  it('a chain stored as one snapshot (before account rows) keeps its balances, gets the purse airdrops come from, and takes rows over it', async () => {
    const services = shared;
    const owner = Keypair.generate().publicKey;
    // As chains were built then: no purse (airdrops came from litesvm's own key).
    const old = new LiteSVM();
    old.setAccount({
      address: address(owner.toBase58()),
      lamports: lamports(7n * SOL),
      programAddress: address(SystemProgram.programId.toBase58()),
      data: new Uint8Array(),
      executable: false,
      space: 0n,
    });
    // A network name of its own: the shared test database's chains stay as they are.
    const network = `legacy-${Date.now()}` as 'devnet';
    await services.db.execute(
      sql`insert into solana_sandbox_chains (network, version, snapshot)
          values (${network}, 3, ${deflateSync(old.toBytes(), { level: 1 })}::bytea)`,
    );
    const store = new SandboxChainStore(services.db, createSandboxWorld, upgradeSandboxWorld);
    expect(await store.read(network, (svm) => svm.getBalance(address(owner.toBase58())))).toBe(7n * SOL);
    const to = Keypair.generate().publicKey;
    const signer = Keypair.generate();
    await store.change(network, (chain) => {
      airdrop(chain, signer.publicKey, SOL, true);
      return async () => undefined;
    });
    const transfer = new Transaction({
      feePayer: signer.publicKey,
      blockhash: store.blockhashes.latest(network).blockhash,
      lastValidBlockHeight: 0,
    }).add(SystemProgram.transfer({ fromPubkey: signer.publicKey, toPubkey: to, lamports: SOL / 2n }));
    transfer.sign(signer);
    await store.change(network, (chain) => {
      chain.run(transfer.serialize());
      return async () => undefined;
    });
    const reloaded = new SandboxChainStore(services.db, createSandboxWorld, upgradeSandboxWorld);
    expect(await reloaded.read(network, (svm) => svm.getBalance(address(to.toBase58())))).toBe(SOL / 2n);
    expect(await reloaded.read(network, (svm) => svm.getBalance(address(owner.toBase58())))).toBe(7n * SOL);
    expect(await reloaded.executed(network, getBase58Decoder().decode(transfer.signature!))).toBe(true);
  });
});

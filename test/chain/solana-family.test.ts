import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/principal.js';
import { ChainFamilies } from '../../src/domain/chain/registry.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';

/**
 * Solana through the chain-neutral core's family interface alone: the registry finds it, its
 * addresses, its signing of a prepared transfer, and its chain adapter's send, state and balances
 * on a sandbox network.
 */
describe('Solana as a chain family', () => {
  let services: Services;
  let alice: Principal;
  beforeAll(async () => {
    services = await createTestServices();
    alice = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(alice, { network: 'devnet' });
  });

  it('is registered by name, and an unknown family is the caller input', () => {
    expect(services.chainFamilies.names).toEqual(['solana', 'evm']);
    expect(services.chainFamilies.get('solana').networks).toEqual(['mainnet-beta', 'devnet', 'testnet']);
    expect(() => services.chainFamilies.get('bitcoin', 'chain')).toThrow(/chain must be one of solana, evm/);
    const solana = services.chainFamilies.get('solana');
    expect(() => new ChainFamilies([solana, solana])).toThrow(/registered twice/);
  });

  it('makes addresses it reads as its own, and reads no other string as one', () => {
    const solana = services.chainFamilies.get('solana');
    const { address, secret } = solana.addresses.generate();
    expect(secret).toHaveLength(64);
    expect(Keypair.fromSecretKey(secret).publicKey.toBase58()).toBe(address);
    expect(solana.addresses.isValid(address)).toBe(true);
    expect(services.chainFamilies.familyOfAddress(address)?.name).toBe('solana');
    expect(solana.addresses.isValid('0x52908400098527886E0F7030069857D2E4169EE7')).toBe(false);
    expect(solana.addresses.isValid('not an address')).toBe(false);
    // An EVM address is the EVM family's, never Solana's; a string of neither family is nobody's.
    expect(services.chainFamilies.familyOfAddress('0x52908400098527886E0F7030069857D2E4169EE7')?.name).toBe('evm');
    expect(services.chainFamilies.familyOfAddress('not an address')).toBeUndefined();
  });

  it('signs a prepared transfer with the custody, sends it raw and follows it to confirmed', async () => {
    const solana = services.chainFamilies.get('solana');
    const chain = solana.chain('sandbox', 'devnet');
    const wallet = await services.solanaWallets.walletOf(alice);
    const to = Keypair.generate().publicKey;
    const { blockhash, lastValidBlockHeight } = await services.solanaChains
      .chainFor('sandbox', 'devnet')
      .latestBlockhash();
    const owner = new PublicKey(wallet.address);
    const unsigned = new Transaction({
      feePayer: owner,
      blockhash,
      lastValidBlockHeight: Number(lastValidBlockHeight),
    }).add(SystemProgram.transfer({ fromPubkey: owner, toPubkey: to, lamports: 1_000_000n }));
    const before = await chain.nativeBalance(wallet.address);

    const signed = await solana.signing.sign(
      {
        unsigned: unsigned.serialize({ requireAllSignatures: false, verifySignatures: false }),
        signer: wallet.address,
      },
      (message) => services.solanaWallets.sign(wallet, message),
    );
    expect(await chain.txState(signed.hash)).toEqual({ state: 'unknown' });
    expect(await chain.sendRaw(signed.wire)).toBe(signed.hash);

    expect(await chain.txState(signed.hash)).toEqual({ state: 'confirmed' });
    expect(await chain.nativeBalance(to.toBase58())).toBe(1_000_000n);
    expect(await chain.nativeBalance(wallet.address)).toBe(before - 1_000_000n - 5_000n);
    expect(await chain.height()).toBeGreaterThan(0n);
  });

  it('refuses to sign for an address that is not a signer of the transfer', async () => {
    const solana = services.chainFamilies.get('solana');
    const payer = Keypair.generate().publicKey;
    const { blockhash } = await services.solanaChains.chainFor('sandbox', 'devnet').latestBlockhash();
    const unsigned = new Transaction({ feePayer: payer, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer, toPubkey: Keypair.generate().publicKey, lamports: 1n }),
    );
    const wallet = await services.solanaWallets.walletOf(alice);
    await expect(
      solana.signing.sign(
        {
          unsigned: unsigned.serialize({ requireAllSignatures: false, verifySignatures: false }),
          signer: wallet.address,
        },
        (message) => services.solanaWallets.sign(wallet, message),
      ),
    ).rejects.toThrow();
  });
});

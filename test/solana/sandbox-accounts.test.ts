import { address } from '@solana/kit';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { LiteSVM } from 'litesvm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  accountAt,
  accountExists,
  addressOf,
  keyBytes,
  lamportsAt,
  putAccount,
} from '../../src/domain/solana/sandbox-accounts.js';
import {
  ChainFailure,
  createSandboxWorld,
  faucetKeypair,
  purseKeypair,
  runWire,
  SANDBOX_POOLS,
  tokenBySymbol,
} from '../../src/domain/solana/sandbox-world.js';
import { associatedTokenAddress } from '../../src/domain/solana/token-accounts.js';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** A chain built as the store builds one: genesis bytes loaded again, no history, no blockhash check. */
function sandboxChain(): LiteSVM {
  const built = new LiteSVM();
  createSandboxWorld(built);
  const svm = LiteSVM.fromBytes(built.toBytes());
  svm.withTransactionHistory(0n);
  svm.withBlockhashCheck(false);
  return svm;
}

/** What litesvm's public API reads for an account, in the shape `accountAt` answers. */
function publicRead(svm: LiteSVM, key: string) {
  const account = svm.getAccount(address(key));
  if (!account.exists) return null;
  return {
    address: key,
    lamports: BigInt(account.lamports),
    owner: account.programAddress as string,
    data: Uint8Array.from(account.data),
    executable: account.executable,
  };
}

function transferWire(svm: LiteSVM, from: Keypair, to: string, lamports: bigint): Uint8Array {
  const tx = new Transaction({ feePayer: from.publicKey, blockhash: svm.latestBlockhash(), lastValidBlockHeight: 0 });
  tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: new PublicKey(to), lamports }));
  tx.sign(from);
  return tx.serialize();
}

describe('sandbox accounts through litesvm’s native handle', () => {
  let svm: LiteSVM;
  const usdc = tokenBySymbol('USDC')!.address;
  beforeAll(() => {
    svm = sandboxChain();
  });

  it('reads every kind of account as the public API does, and nothing for an absent one', () => {
    const poolUsdc = associatedTokenAddress(usdc, SANDBOX_POOLS[0]!.wallet.publicKey.toBase58()).toBase58();
    const keys = [
      purseKeypair().publicKey.toBase58(),
      faucetKeypair().publicKey.toBase58(),
      usdc,
      poolUsdc,
      SYSTEM_PROGRAM,
    ];
    for (const key of keys) {
      const read = accountAt(svm, key);
      expect(read, key).not.toBeNull();
      expect(read).toEqual(publicRead(svm, key));
    }
    const nobody = Keypair.generate().publicKey.toBase58();
    expect(accountAt(svm, nobody)).toBeNull();
    expect(publicRead(svm, nobody)).toBeNull();
  });

  it('writes an account the public API reads back, and null makes it absent', () => {
    const key = Keypair.generate().publicKey.toBase58();
    const data = Uint8Array.from([1, 2, 3, 4]);
    putAccount(svm, key, { address: key, lamports: 5_000_000n, owner: usdc, data, executable: false }, SYSTEM_PROGRAM);
    expect(publicRead(svm, key)).toEqual({ address: key, lamports: 5_000_000n, owner: usdc, data, executable: false });
    // The answer is a copy: changing it changes nothing on the chain.
    accountAt(svm, key)!.data[0] = 9;
    expect(accountAt(svm, key)!.data[0]).toBe(1);
    putAccount(svm, key, null, SYSTEM_PROGRAM);
    expect(accountAt(svm, key)).toBeNull();
  });

  it('converts addresses both ways, and refuses a string that is not one', () => {
    const key = Keypair.generate().publicKey;
    expect(Array.from(keyBytes(key.toBase58()))).toEqual(Array.from(key.toBytes()));
    expect(addressOf(key.toBytes())).toBe(key.toBase58());
    // A key inside a longer buffer (token account data) is read from its offset.
    const padded = new Uint8Array(40);
    padded.set(key.toBytes(), 8);
    expect(addressOf(padded.subarray(8))).toBe(key.toBase58());
    expect(() => keyBytes('not-an-address')).toThrow();
    expect(() => keyBytes('1111')).toThrow();
  });

  it('runs a signed legacy transaction from its wire bytes, moving what the public API sees', () => {
    const to = Keypair.generate().publicKey.toBase58();
    const wire = transferWire(svm, faucetKeypair(), to, 2n * BigInt(LAMPORTS_PER_SOL));
    expect(Array.from(runWire(svm, wire))).toEqual(Array.from(wire.subarray(1, 65)));
    expect(svm.getBalance(address(to))).toBe(2n * BigInt(LAMPORTS_PER_SOL));
  });

  it('runs a version 0 transaction from its wire bytes', () => {
    const to = Keypair.generate();
    const message = new TransactionMessage({
      payerKey: faucetKeypair().publicKey,
      recentBlockhash: svm.latestBlockhash(),
      instructions: [
        SystemProgram.transfer({
          fromPubkey: faucetKeypair().publicKey,
          toPubkey: to.publicKey,
          lamports: 3n * BigInt(LAMPORTS_PER_SOL),
        }),
      ],
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([faucetKeypair()]);
    runWire(svm, tx.serialize());
    expect(accountAt(svm, to.publicKey.toBase58())?.lamports).toBe(3n * BigInt(LAMPORTS_PER_SOL));
  });

  it('refuses a transaction whose signature does not match, or that carries none, and moves nothing', () => {
    const to = Keypair.generate().publicKey.toBase58();
    const before = accountAt(svm, faucetKeypair().publicKey.toBase58())!.lamports;
    const tampered = transferWire(svm, faucetKeypair(), to, BigInt(LAMPORTS_PER_SOL));
    tampered[1] = (tampered[1]! + 1) % 256;
    expect(() => runWire(svm, tampered)).toThrow(ChainFailure);
    const unsigned = transferWire(svm, faucetKeypair(), to, BigInt(LAMPORTS_PER_SOL));
    unsigned.fill(0, 1, 65);
    expect(() => runWire(svm, unsigned)).toThrow(ChainFailure);
    expect(accountAt(svm, to)).toBeNull();
    expect(accountAt(svm, faucetKeypair().publicKey.toBase58())!.lamports).toBe(before);
  });

  it('refuses, as a chain failure, bytes that are no transaction or not in canonical form, before the VM sees them', () => {
    const to = Keypair.generate().publicKey.toBase58();
    const wire = transferWire(svm, faucetKeypair(), to, BigInt(LAMPORTS_PER_SOL));
    // The message's account-key count written in two bytes (k | 0x80, 0x00): web3.js reads it,
    // litesvm's native decoder panics on it, ending the process. It sits after the signature count
    // (1), the signature (64) and the message header (3).
    const at = 1 + 64 + 3;
    const padded = new Uint8Array(wire.length + 1);
    padded.set(wire.subarray(0, at), 0);
    padded.set([wire[at]! | 0x80, 0x00], at);
    padded.set(wire.subarray(at + 1), at + 2);
    expect(() => runWire(svm, padded)).toThrow(/canonical/);
    for (const bytes of [
      new Uint8Array(),
      Uint8Array.from([1, 0, 0]),
      wire.subarray(0, 70),
      Uint8Array.from([0xff, 0xff, 0xff, 1]),
    ])
      expect(() => runWire(svm, bytes)).toThrow(ChainFailure);
    expect(accountAt(svm, to)).toBeNull();
  });

  it('reads lamports and existence without the data, as accountAt does', () => {
    const nobody = Keypair.generate().publicKey.toBase58();
    expect(lamportsAt(svm, faucetKeypair().publicKey.toBase58())).toBe(
      accountAt(svm, faucetKeypair().publicKey.toBase58())!.lamports,
    );
    expect(lamportsAt(svm, nobody)).toBe(0n);
    expect(accountExists(svm, usdc)).toBe(true);
    expect(accountExists(svm, nobody)).toBe(false);
    expect(() => accountExists(svm, 'not-an-address')).toThrow();
  });

  it('hands out copies of remembered key bytes, and reads a key only from 32 bytes', () => {
    const key = Keypair.generate().publicKey.toBase58();
    keyBytes(key).fill(0);
    expect(Array.from(keyBytes(key))).toEqual(Array.from(new PublicKey(key).toBytes()));
    expect(() => addressOf(new Uint8Array(31))).toThrow(RangeError);
  });
});

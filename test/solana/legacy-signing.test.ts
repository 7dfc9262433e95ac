import { sign as signEd25519 } from 'node:crypto';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { compactU16, signLegacy } from '../../src/domain/solana/legacy-signing.js';

const BLOCKHASH = 'EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k';

/** Signs as custodial wallets do: node's ed25519 with the keypair's secret. */
const signerOf = (keypair: Keypair) => async (message: Uint8Array) =>
  new Uint8Array(
    signEd25519(null, message, {
      key: {
        kty: 'OKP',
        crv: 'Ed25519',
        d: Buffer.from(keypair.secretKey.subarray(0, 32)).toString('base64url'),
        x: Buffer.from(keypair.publicKey.toBytes()).toString('base64url'),
      },
      format: 'jwk',
    }),
  );

function transfer(payer: Keypair, ...others: Keypair[]): Transaction {
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash: BLOCKHASH, lastValidBlockHeight: 0 });
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 7n }));
  // Another signer moves money too, so the message needs its signature.
  for (const other of others)
    tx.add(SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: 1n }));
  return tx;
}

/** What web3.js serializes for `tx`'s instructions signed by all of `signers` (the first pays), and its id. */
function web3Signed(tx: Transaction, signers: Keypair[]): { wire: Buffer; id: Buffer } {
  const reference = transfer(signers[0]!);
  reference.instructions = tx.instructions;
  reference.sign(...signers);
  return { wire: reference.serialize(), id: reference.signature! };
}

/** The wire and the id are web3.js's, byte for byte. */
function expectWeb3(signed: { wire: Uint8Array; firstSignature: Uint8Array }, tx: Transaction, signers: Keypair[]) {
  const reference = web3Signed(tx, signers);
  expect(Buffer.from(signed.wire).equals(reference.wire)).toBe(true);
  expect(Buffer.from(signed.firstSignature).equals(reference.id)).toBe(true);
}

describe('signing a legacy transaction with one compile of its message', () => {
  it('gives the bytes web3.js serializes, and the fee payer’s signature as the id', async () => {
    const payer = Keypair.generate();
    const tx = transfer(payer);
    expectWeb3(await signLegacy(tx, payer.publicKey, signerOf(payer)), tx, [payer]);
  });

  it('keeps a signature another signer already made, wherever the keys sort', async () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const tx = transfer(payer, other);
    tx.partialSign(other);
    expectWeb3(await signLegacy(tx, payer.publicKey, signerOf(payer)), tx, [payer, other]);
  });

  it('signs as a signer that is not the fee payer, the payer’s signature staying first', async () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const tx = transfer(payer, other);
    tx.partialSign(payer);
    expectWeb3(await signLegacy(tx, other.publicKey, signerOf(other)), tx, [payer, other]);
  });

  it('refuses when another signer has not signed, or the key does not sign the transaction', async () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    await expect(signLegacy(transfer(payer, other), payer.publicKey, signerOf(payer))).rejects.toThrow(
      `Missing signature for public key ${other.publicKey.toBase58()}`,
    );
    const stranger = Keypair.generate();
    await expect(signLegacy(transfer(payer), stranger.publicKey, signerOf(stranger))).rejects.toThrow(
      'is not a signer of this transaction',
    );
  });

  it('writes lengths as compact-u16, as the wire format has them', () => {
    expect(Array.from(compactU16(0))).toEqual([0]);
    expect(Array.from(compactU16(127))).toEqual([0x7f]);
    expect(Array.from(compactU16(128))).toEqual([0x80, 0x01]);
    expect(Array.from(compactU16(16_383))).toEqual([0xff, 0x7f]);
    expect(Array.from(compactU16(16_384))).toEqual([0x80, 0x80, 0x01]);
  });
});

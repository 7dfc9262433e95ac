import type { PublicKey, Transaction } from '@solana/web3.js';

/**
 * A legacy transaction signed by one of its signers, as wire bytes with its first signature (the
 * transaction's id), its message compiled once.
 * web3.js compiles the message again in each of `serializeMessage`, `addSignature` and
 * `serialize` (sorting the keys and base58-encoding each to compare them): about a tenth of the
 * gateway's CPU per sandbox transfer. The bytes are the ones `serialize()` gives (ed25519 signs
 * deterministically; test/solana/legacy-signing.test.ts compares them).
 *
 * Signatures other signers already made (`partialSign`) are kept. A signer left without one is
 * refused here: the chain would refuse the transaction anyway, and a sandbox transfer has one
 * signer (web3.js's `serialize({ verifySignatures: false })` wrote zeros in its place).
 */
export async function signLegacy(
  transaction: Transaction,
  signer: PublicKey,
  sign: (message: Uint8Array) => Promise<Uint8Array>,
): Promise<{ wire: Uint8Array; firstSignature: Uint8Array }> {
  const message = transaction.compileMessage();
  const messageBytes = message.serialize();
  const signers = message.accountKeys.slice(0, message.header.numRequiredSignatures);
  const own = signers.findIndex((key) => key.equals(signer));
  if (own < 0) throw new Error(`${signer.toBase58()} is not a signer of this transaction.`);
  const signature = await sign(messageBytes);
  if (signature.length !== 64) throw new Error(`An ed25519 signature is 64 bytes, not ${signature.length}.`);
  const signatures = signers.map((key, i) => {
    if (i === own) return signature;
    const given = transaction.signatures.find((s) => s.publicKey.equals(key))?.signature;
    if (!given) throw new Error(`Missing signature for public key ${key.toBase58()}.`);
    return given;
  });
  const count = compactU16(signatures.length);
  const wire = new Uint8Array(count.length + signatures.length * 64 + messageBytes.length);
  wire.set(count, 0);
  signatures.forEach((s, i) => wire.set(s, count.length + i * 64));
  wire.set(messageBytes, count.length + signatures.length * 64);
  // The first signature is the transaction's id.
  return { wire, firstSignature: signatures[0]! };
}

/** Solana's compact-u16 length prefix: 7 bits a byte, low first, a set high bit meaning more. */
export function compactU16(value: number): Uint8Array {
  const bytes: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest >>= 7;
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return Uint8Array.from(bytes);
}

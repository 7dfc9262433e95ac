import { getAddressDecoder } from '@solana/kit';

/** Addresses remembered at most; past it the memory starts again. */
const REMEMBERED = 50_000;
const decoder = getAddressDecoder();
const addressByBytes = new Map<string, string>();

/**
 * The base58 address of 32 key bytes (a key inside account data, or an account's owner),
 * remembered: base58 conversions were about a fifth of the gateway's CPU per sandbox transfer
 * (docs/benchmarks.md, "Sandbox transfer CPU and stamping lag").
 */
export function addressOf(bytes: Uint8Array): string {
  if (bytes.length < 32) throw new RangeError(`A key is 32 bytes, not ${bytes.length}.`);
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, 32).toString('latin1');
  let address = addressByBytes.get(raw);
  if (address === undefined) {
    address = decoder.decode(bytes.subarray(0, 32));
    if (addressByBytes.size >= REMEMBERED) addressByBytes.clear();
    addressByBytes.set(raw, address);
  }
  return address;
}

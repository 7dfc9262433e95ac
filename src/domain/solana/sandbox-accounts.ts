import { getAddressDecoder, getAddressEncoder } from '@solana/kit';
import { Account, type LiteSVM } from 'litesvm';
import type { AccountState } from './sandbox-chain-rows.js';

/**
 * Sandbox accounts read and written by their key bytes. litesvm's public methods take base58
 * addresses and convert through BigInt on every call: the key going in and the owner coming out
 * (building a new codec each time). A sandbox transfer reads a dozen accounts, and those
 * conversions came to about a sixth of the gateway's CPU per transfer (docs/benchmarks.md,
 * "Sandbox transfer CPU"). litesvm's native handle takes and gives bytes; the few thousand
 * addresses a sandbox uses are converted once and remembered here.
 *
 * The native handle is litesvm's own (`inner`, what its public methods call). The lockfile pins
 * litesvm; test/solana/sandbox-accounts.test.ts compares these reads with the public ones, so an
 * upgrade that changes the handle fails there, not at a partner.
 */

interface NativeAccount {
  lamports(): bigint;
  data(): Uint8Array;
  owner(): Uint8Array;
  executable(): boolean;
}

/** What litesvm answers a sent transaction: its metadata, or a failure (which has `err`). */
export type SendOutcome = ReturnType<LiteSVM['sendTransaction']>;

interface NativeSvm {
  getAccount(key: Uint8Array): NativeAccount | null;
  setAccount(key: Uint8Array, account: Account): void;
  sendLegacyTransaction(wire: Uint8Array): SendOutcome;
  sendVersionedTransaction(wire: Uint8Array): SendOutcome;
}

const nativeOf = (svm: LiteSVM): NativeSvm => (svm as unknown as { inner: NativeSvm }).inner;

/** Conversions remembered at most, each way (a sandbox has a few per tenant); past it the memory starts again. */
const REMEMBERED = 50_000;
const encoder = getAddressEncoder();
const decoder = getAddressDecoder();
const bytesByAddress = new Map<string, Uint8Array>();
const addressByBytes = new Map<string, string>();

/** An address's 32 bytes (a base58 string that is not an address throws, as kit's codec does). */
export function keyBytes(address: string): Uint8Array {
  let bytes = bytesByAddress.get(address);
  if (!bytes) {
    bytes = Uint8Array.from(encoder.encode(address as never));
    if (bytesByAddress.size >= REMEMBERED) bytesByAddress.clear();
    bytesByAddress.set(address, bytes);
  }
  return bytes;
}

/** The base58 address of 32 key bytes (a key inside account data, or an account's owner). */
export function addressOf(bytes: Uint8Array): string {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, 32).toString('latin1');
  let address = addressByBytes.get(raw);
  if (address === undefined) {
    address = decoder.decode(bytes.subarray(0, 32));
    if (addressByBytes.size >= REMEMBERED) addressByBytes.clear();
    addressByBytes.set(raw, address);
  }
  return address;
}

/** An account's whole state (data copied), or null when it does not exist. */
export function accountAt(svm: LiteSVM, address: string): AccountState | null {
  const account = nativeOf(svm).getAccount(keyBytes(address));
  if (account === null) return null;
  return {
    address,
    lamports: account.lamports(),
    owner: addressOf(account.owner()),
    data: account.data().slice(),
    executable: account.executable(),
  };
}

/** Writes an account's state into the chain; null (or no lamports) makes it absent. */
export function putAccount(svm: LiteSVM, address: string, state: AccountState | null, systemProgram: string): void {
  const data = state?.data ?? new Uint8Array();
  nativeOf(svm).setAccount(
    keyBytes(address),
    new Account(state?.lamports ?? 0n, data, keyBytes(state?.owner ?? systemProgram), state?.executable ?? false, 0n),
  );
}

/**
 * Runs a transaction's wire bytes as they are. litesvm's `sendTransaction` takes kit's decoded
 * transaction and encodes it back to these same bytes; its native handle verifies the signatures
 * (the chain's signature check is on) and refuses a transaction that lacks one.
 */
export function sendWire(svm: LiteSVM, wire: Uint8Array): SendOutcome {
  const native = nativeOf(svm);
  return isVersioned(wire) ? native.sendVersionedTransaction(wire) : native.sendLegacyTransaction(wire);
}

/**
 * Whether the message after the signatures starts with a version prefix (its high bit set): a
 * legacy message starts with its signature count, which is below 128.
 */
function isVersioned(wire: Uint8Array): boolean {
  // The signature count is a compact-u16: 7 bits a byte, low first, a set high bit meaning more.
  let count = 0;
  let offset = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = wire[offset++];
    if (byte === undefined || shift > 14) throw new RangeError('Not a transaction: its signature count is cut short.');
    count |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
  }
  const first = wire[offset + count * 64];
  if (first === undefined) throw new RangeError('Not a transaction: it ends before its message.');
  return (first & 0x80) !== 0;
}

import { createRequire } from 'node:module';
import { getAddressEncoder } from '@solana/kit';
import type { Account as AccountClass, LiteSVM } from 'litesvm';
import { addressOf } from './key-addresses.js';
import type { AccountState } from './sandbox-chain-rows.js';

export { addressOf } from './key-addresses.js';

/**
 * Sandbox accounts read and written by their key bytes. litesvm's public methods take base58
 * addresses and convert through BigInt on every call: the key going in and the owner coming out
 * (building a new codec each time). A sandbox transfer reads a dozen accounts, and base58
 * conversions came to about a fifth of the gateway's CPU per transfer (docs/benchmarks.md,
 * "Sandbox transfer CPU and stamping lag"). litesvm's native handle takes and gives bytes; the few
 * thousand addresses a sandbox uses are converted once and remembered here.
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
  setAccount(key: Uint8Array, account: AccountClass): void;
  getBalance(key: Uint8Array): bigint | null;
  sendLegacyTransaction(wire: Uint8Array): SendOutcome;
  sendVersionedTransaction(wire: Uint8Array): SendOutcome;
}

const nativeOf = (svm: LiteSVM): NativeSvm => (svm as unknown as { inner: NativeSvm }).inner;

/** Addresses remembered at most (a sandbox has a few per tenant); past it the memory starts again. */
const REMEMBERED = 50_000;
const encoder = getAddressEncoder();
const bytesByAddress = new Map<string, Uint8Array>();

/**
 * An address's 32 bytes, as remembered (a base58 string that is not an address throws, as kit's
 * codec does). Shared: handed only to litesvm, which copies them.
 */
function rememberedBytes(address: string): Uint8Array {
  let bytes = bytesByAddress.get(address);
  if (!bytes) {
    bytes = Uint8Array.from(encoder.encode(address as never));
    if (bytesByAddress.size >= REMEMBERED) bytesByAddress.clear();
    bytesByAddress.set(address, bytes);
  }
  return bytes;
}

/** An address's 32 bytes, a copy of its own. */
export const keyBytes = (address: string): Uint8Array => rememberedBytes(address).slice();

/** An account's whole state (data copied), or null when it does not exist. */
export function accountAt(svm: LiteSVM, address: string): AccountState | null {
  const account = nativeOf(svm).getAccount(rememberedBytes(address));
  if (account === null) return null;
  return {
    address,
    lamports: account.lamports(),
    owner: addressOf(account.owner()),
    data: account.data().slice(),
    executable: account.executable(),
  };
}

/** An account's lamports (0 when it does not exist), without copying its data. */
export function lamportsAt(svm: LiteSVM, address: string): bigint {
  return nativeOf(svm).getBalance(rememberedBytes(address)) ?? 0n;
}

/** Whether an account exists, without copying its data. */
export function accountExists(svm: LiteSVM, address: string): boolean {
  return nativeOf(svm).getAccount(rememberedBytes(address)) !== null;
}

/**
 * litesvm's Account class, loaded on first use: a chain exists by then (the store imports litesvm
 * when it opens one), and a module-level import made every start load litesvm and @solana/kit
 * (about 0.4 s of a warm start, docs/benchmarks.md "Footprint and start") for servers that may
 * never touch the sandbox chain.
 */
let accountClass: typeof AccountClass | undefined;
function litesvmAccount(): typeof AccountClass {
  accountClass ??= (createRequire(import.meta.url)('litesvm') as typeof import('litesvm')).Account;
  return accountClass;
}

/** Writes an account's state into the chain; null (or no lamports) makes it absent. */
export function putAccount(svm: LiteSVM, address: string, state: AccountState | null, systemProgram: string): void {
  const data = state?.data ?? new Uint8Array();
  nativeOf(svm).setAccount(
    rememberedBytes(address),
    new (litesvmAccount())(
      state?.lamports ?? 0n,
      data,
      rememberedBytes(state?.owner ?? systemProgram),
      state?.executable ?? false,
      0n,
    ),
  );
}

/**
 * Runs a transaction's wire bytes as they are: litesvm's `sendTransaction` takes kit's decoded
 * transaction and encodes it back to these same bytes. The native handle verifies the signatures
 * (the chain's signature check is on) and refuses a transaction that lacks one, but it panics,
 * ending the process, on bytes it cannot decode: only `runWire` (sandbox-world.ts) calls this, with
 * bytes it has checked are a transaction in canonical form.
 */
export function sendCheckedWire(svm: LiteSVM, wire: Uint8Array, versioned: boolean): SendOutcome {
  const native = nativeOf(svm);
  return versioned ? native.sendVersionedTransaction(wire) : native.sendLegacyTransaction(wire);
}

import { getBase58Decoder } from '@solana/kit';
import { TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { AddressLookupTableAccount, VersionedTransaction } from '@solana/web3.js';
import type { LiteSVM } from 'litesvm';
import { accountAt, putAccount } from './sandbox-accounts.js';
import type { AccountState } from './sandbox-chain-rows.js';
import { ChainFailure, runWire } from './sandbox-world.js';
import { SOL_MINT } from './native-token.js';
import { parseTokenAccount } from './token-accounts.js';

const TOKEN_PROGRAM = TOKEN_PROGRAM_ID.toBase58();

/** What one transaction changed of one owner's balance of one asset (SOL: its own lamports; a token: its token accounts'). */
export interface BalanceMove {
  owner: string;
  asset: string;
  delta: bigint;
  /** The owner's balance of the asset in the accounts the transaction touched, before it ran. */
  before: bigint;
}

/** One transaction run during a change: its signature, its signers, and every balance it moved. */
export interface ChainEffect {
  signature: string;
  signers: string[];
  moves: BalanceMove[];
}

/** Owners' balances held by these account states, keyed `owner asset`. */
function holdingsOf(states: Iterable<AccountState | null>): Map<string, bigint> {
  const held = new Map<string, bigint>();
  const add = (owner: string, asset: string, amount: bigint) =>
    held.set(`${owner} ${asset}`, (held.get(`${owner} ${asset}`) ?? 0n) + amount);
  for (const state of states) {
    if (!state) continue;
    if (state.owner === TOKEN_PROGRAM && state.data.length === 165) {
      const token = parseTokenAccount(state.data);
      add(token.owner, token.mint, token.amount);
    } else if (state.data.length === 0) add(state.address, SOL_MINT, BigInt(state.lamports));
  }
  return held;
}

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** The blockhashes a chain accepts now (sandbox-blockhash.ts), for one network. */
export interface RecentBlockhashes {
  latest: string;
  isRecent(blockhash: string): boolean;
}

const base58 = getBase58Decoder();

/**
 * One change of a sandbox chain, run on the in-memory chain before anything is written: it runs
 * transactions, remembers each touched account's state from before, and so can tell what changed
 * (the rows the commit writes) or put everything back (when the work, the chain or the commit
 * refuses). Read the chain through `svm`; run transactions only through `run`, or nothing records them.
 */
export class ChainWork {
  private readonly before = new Map<string, AccountState | null>();
  readonly signatures: string[] = [];
  /** What each transaction run moved, in order: the asset ledger posts it with the chain's commit. */
  readonly effects: ChainEffect[] = [];

  constructor(
    readonly svm: LiteSVM,
    private readonly executedBefore: (signature: string) => boolean,
    private readonly blockhashes?: RecentBlockhashes,
  ) {}

  /** The blockhash a transaction built during the work signs with (litesvm's own, on a chain without expiry). */
  get blockhash(): string {
    return this.blockhashes?.latest ?? this.svm.latestBlockhash();
  }

  /** Runs a signed transaction; returns its signature, or throws ChainFailure and leaves the chain as it was. */
  run(wire: Uint8Array): string {
    const parsed = VersionedTransaction.deserialize(wire);
    const signature = base58.decode(parsed.signatures[0]!);
    if (this.executedBefore(signature) || this.signatures.includes(signature))
      throw new ChainFailure('AlreadyProcessed: this transaction has already been processed.');
    // Its signature may have been forgotten (retention prunes them); an old transaction is refused on its age.
    if (this.blockhashes && !this.blockhashes.isRecent(parsed.message.recentBlockhash))
      throw new ChainFailure(
        'BlockhashNotFound: the transaction’s blockhash has expired (150 slots, about a minute); sign it again with a recent one.',
      );
    const keys = accountKeys(this.svm, parsed);
    const own = new Map(keys.map((key) => [key, accountAt(this.svm, key)]));
    for (const [key, state] of own) if (!this.before.has(key)) this.before.set(key, state);
    try {
      runWire(this.svm, wire);
    } catch (error) {
      // A refused transaction moves nothing, not even its fee.
      for (const [key, state] of own) restore(this.svm, key, state);
      throw error;
    }
    this.signatures.push(signature);
    const was = holdingsOf(own.values());
    const now = holdingsOf(keys.map((key) => accountAt(this.svm, key)));
    const moves: BalanceMove[] = [];
    for (const key of new Set([...was.keys(), ...now.keys()])) {
      const delta = (now.get(key) ?? 0n) - (was.get(key) ?? 0n);
      const [owner, asset] = key.split(' ') as [string, string];
      if (delta !== 0n) moves.push({ owner, asset, delta, before: was.get(key) ?? 0n });
    }
    this.effects.push({
      signature,
      signers: parsed.message.staticAccountKeys
        .slice(0, parsed.message.header.numRequiredSignatures)
        .map((k) => k.toBase58()),
      moves,
    });
    return signature;
  }

  /** The accounts whose state differs from before the work. */
  changed(): AccountState[] {
    return changedBy([this]);
  }

  /** Every touched account, with its state from before the work. */
  touched(): ReadonlyMap<string, AccountState | null> {
    return this.before;
  }

  /** Puts every touched account back as it was before the work. */
  undo(): void {
    for (const [key, state] of this.before) restore(this.svm, key, state);
  }
}

/** The accounts whose state differs from before the first of these works (run one after another on one chain). */
export function changedBy(works: ChainWork[]): AccountState[] {
  const before = new Map<string, AccountState | null>();
  for (const work of works) for (const [key, was] of work.touched()) if (!before.has(key)) before.set(key, was);
  const changed: AccountState[] = [];
  for (const [key, was] of before) {
    const now = accountAt(works[0]!.svm, key);
    if (now && !(was && same(was, now))) changed.push(now);
    // An account emptied to nothing is kept as a row with no lamports, which loads as absent.
    else if (!now && was)
      changed.push({ address: key, lamports: 0n, owner: SYSTEM_PROGRAM, data: new Uint8Array(), executable: false });
  }
  return changed;
}

/** Every account a transaction names, with those it loads from address lookup tables. */
function accountKeys(svm: LiteSVM, parsed: VersionedTransaction): string[] {
  const lookups = parsed.message.addressTableLookups.map((lookup) => {
    const table = accountAt(svm, lookup.accountKey.toBase58());
    if (!table) throw new ChainFailure(`Address lookup table ${lookup.accountKey.toBase58()} not found.`);
    return new AddressLookupTableAccount({
      key: lookup.accountKey,
      state: AddressLookupTableAccount.deserialize(Uint8Array.from(table.data)),
    });
  });
  return parsed.message
    .getAccountKeys({ addressLookupTableAccounts: lookups })
    .keySegments()
    .flat()
    .map((k) => k.toBase58());
}

/** Writes an account's state into the chain; null (or no lamports) makes it absent. */
export function restore(svm: LiteSVM, key: string, state: AccountState | null): void {
  putAccount(svm, key, state, SYSTEM_PROGRAM);
}

function same(a: AccountState, b: AccountState): boolean {
  if (a.lamports !== b.lamports || a.owner !== b.owner || a.executable !== b.executable) return false;
  if (a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}

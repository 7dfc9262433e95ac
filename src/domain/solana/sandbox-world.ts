import { createHash, randomBytes } from 'node:crypto';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import { address, lamports } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { SOL, type TokenInfo } from './native-token.js';
import { sendCheckedWire } from './sandbox-accounts.js';
import { associatedTokenAddress } from './token-accounts.js';

/**
 * The sandbox's world, the same on every network and every instance: its keys come from fixed
 * seeds. Three tokens (mint authority: the faucet), and constant-product pools whose reserves are
 * the on-chain balances of one market-maker wallet per pool.
 */
export { SOL, SOL_MINT, type TokenInfo } from './native-token.js';

const derived = new Map<string, Keypair>();
/**
 * A key of the sandbox world, from a fixed seed, derived once per process and only when first used:
 * deriving one computes a curve point (about 0.1 s for the first, with its tables), and most starts
 * never touch the sandbox chain.
 */
export function sandboxKeypair(name: string): Keypair {
  let keypair = derived.get(name);
  if (!keypair) {
    keypair = Keypair.fromSeed(createHash('sha256').update(`partner-gateway sandbox ${name}`).digest());
    derived.set(name, keypair);
  }
  return keypair;
}

const token = (symbol: string, name: string, decimals: number): TokenInfo => {
  let mintAddress: string | undefined;
  return {
    get address() {
      return (mintAddress ??= sandboxKeypair(`mint:${symbol}`).publicKey.toBase58());
    },
    symbol,
    name,
    decimals,
  };
};
export const SANDBOX_TOKENS: TokenInfo[] = [
  SOL,
  token('USDC', 'USD Coin (sandbox)', 6),
  token('USDT', 'Tether USD (sandbox)', 6),
  token('BONK', 'Bonk (sandbox)', 5),
];
export const tokenBySymbol = (symbol: string) => SANDBOX_TOKENS.find((t) => t.symbol === symbol.toUpperCase());
export const tokenByMint = (mint: string) => SANDBOX_TOKENS.find((t) => t.address === mint);

export interface SandboxPool {
  name: string;
  /** Symbols of the two sides. */
  a: string;
  b: string;
  wallet: Keypair;
  /** Genesis reserves in whole tokens. */
  initialA: bigint;
  initialB: bigint;
}

const pool = (a: string, b: string, initialA: bigint, initialB: bigint): SandboxPool => ({
  name: `${a}/${b}`,
  a,
  b,
  get wallet() {
    return sandboxKeypair(`pool:${a}/${b}`);
  },
  initialA,
  initialB,
});
export const SANDBOX_POOLS: SandboxPool[] = [
  pool('SOL', 'USDC', 10_000n, 1_500_000n),
  pool('SOL', 'USDT', 10_000n, 1_500_000n),
  pool('USDC', 'USDT', 1_000_000n, 1_000_000n),
  pool('SOL', 'BONK', 10_000n, 75_000_000_000n),
];

/** USD prices the sandbox takes as given; SOL and BONK follow from their pools. */
export const STABLE_USD: Record<string, number> = { USDC: 1, USDT: 1 };

/** The mints' authority, and the source of the faucet's tokens. */
export const faucetKeypair = () => sandboxKeypair('faucet');
/** Where airdropped SOL comes from: a billion SOL at genesis (a fixed key, so every instance builds the same chain). */
export const purseKeypair = () => sandboxKeypair('purse');
const unit = (t: TokenInfo) => 10n ** BigInt(t.decimals);

/** Runs signed transactions on a chain: the chain itself at genesis, a recorded change (ChainWork) afterwards. */
export interface ChainRunner {
  readonly svm: LiteSVM;
  /** The blockhash to sign with (absent: litesvm's own). */
  readonly blockhash?: string;
  run(wire: Uint8Array): unknown;
}

/** Runs straight on the chain, recording nothing (genesis, tests' own chains). */
export const directRunner = (svm: LiteSVM): ChainRunner => ({ svm, run: (wire) => runWire(svm, wire) });

const fundPurse = (svm: LiteSVM) =>
  svm.setAccount({
    address: address(purseKeypair().publicKey.toBase58()),
    lamports: lamports(1_000_000_000n * BigInt(LAMPORTS_PER_SOL)),
    programAddress: address(SystemProgram.programId.toBase58()),
    data: new Uint8Array(),
    executable: false,
    space: 0n,
  });

/**
 * Brings a chain stored as a whole snapshot (before account rows) up to today's world: it has no
 * purse (its SOL came from litesvm's own airdrop key), so it gets genesis's.
 */
export function upgradeSandboxWorld(svm: LiteSVM): void {
  if (!svm.getAccount(address(purseKeypair().publicKey.toBase58())).exists) fundPurse(svm);
}

/** Builds the world on a new chain: the faucet's SOL, the mints, and each pool's reserves. */
export function createSandboxWorld(svm: LiteSVM): void {
  const chain = directRunner(svm);
  fundPurse(svm);
  airdrop(chain, faucetKeypair().publicKey, 100_000n * BigInt(LAMPORTS_PER_SOL));
  const mintRent = Number(svm.minimumBalanceForRentExemption(BigInt(MINT_SIZE)));
  for (const t of SANDBOX_TOKENS.filter((t) => t !== SOL)) {
    const mint = sandboxKeypair(`mint:${t.symbol}`);
    execute(
      chain,
      [
        SystemProgram.createAccount({
          fromPubkey: faucetKeypair().publicKey,
          newAccountPubkey: mint.publicKey,
          lamports: mintRent,
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(mint.publicKey, t.decimals, faucetKeypair().publicKey, null),
      ],
      [faucetKeypair(), mint],
    );
  }
  for (const p of SANDBOX_POOLS) {
    for (const [symbol, amount] of [
      [p.a, p.initialA],
      [p.b, p.initialB],
    ] as const) {
      const t = tokenBySymbol(symbol)!;
      if (t === SOL) airdrop(chain, p.wallet.publicKey, amount * unit(t) + svm.minimumBalanceForRentExemption(0n));
      else execute(chain, fundTokenInstructions(p.wallet.publicKey, t, amount * unit(t)), [faucetKeypair()]);
    }
  }
}

/** Mints `raw` of a sandbox token to an owner, creating its token account if needed (the faucet pays). */
export function fundTokenInstructions(owner: PublicKey, t: TokenInfo, raw: bigint): TransactionInstruction[] {
  const mint = new PublicKey(t.address);
  const ata = associatedTokenAddress(mint, owner);
  return [
    createAssociatedTokenAccountIdempotentInstruction(faucetKeypair().publicKey, ata, owner, mint),
    createMintToInstruction(mint, ata, faucetKeypair().publicKey, raw),
  ];
}

/** SOL from the purse (which pays the fee). `unique`: with a random reference key, so the same grant twice is two transactions. */
export function airdrop(chain: ChainRunner, to: PublicKey, raw: bigint, unique = false): void {
  const transfer = SystemProgram.transfer({ fromPubkey: purseKeypair().publicKey, toPubkey: to, lamports: raw });
  // A reference key, as transfers carry (see withReference): the programs ignore it.
  if (unique) transfer.keys.push({ pubkey: new PublicKey(randomBytes(32)), isSigner: false, isWritable: false });
  execute(chain, [transfer], [purseKeypair()]);
}

/** Signs and runs instructions on the sandbox chain; a failure throws with the chain's reason. */
export function execute(chain: ChainRunner, instructions: TransactionInstruction[], signers: Keypair[]): void {
  const tx = new Transaction({
    feePayer: signers[0]!.publicKey,
    blockhash: chain.blockhash ?? chain.svm.latestBlockhash(),
    lastValidBlockHeight: 0,
  }).add(...instructions);
  tx.sign(...signers);
  chain.run(tx.serialize());
}

/** Runs a signed transaction's wire bytes; returns its signature's bytes or throws the failure. */
export function runWire(svm: LiteSVM, wire: Uint8Array): Uint8Array {
  const result = sendCheckedWire(svm, wire, checkedVersioned(wire));
  if ('err' in result) throw new ChainFailure(describeFailure(result.toString(), result.meta().logs()));
  return result.signature();
}

export class ChainFailure extends Error {}

/**
 * Whether wire bytes are a versioned transaction, after checking that they are a transaction
 * written the one way web3.js writes it. litesvm's native decoder panics, ending the process, on
 * bytes it cannot decode, and web3.js reads some it refuses (a length written in more bytes than
 * it needs): bytes web3.js does not write back the same are refused here.
 */
function checkedVersioned(wire: Uint8Array): boolean {
  let parsed: VersionedTransaction;
  let canonical: Uint8Array;
  try {
    parsed = VersionedTransaction.deserialize(wire);
    canonical = parsed.serialize();
  } catch (error) {
    throw new ChainFailure(`Malformed transaction: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Buffer.from(canonical).equals(wire))
    throw new ChainFailure('Malformed transaction: not in canonical wire form.');
  return parsed.version !== 'legacy';
}

function describeFailure(text: string, logs: string[]): string {
  const insufficient = logs.find((l) => /insufficient (funds|lamports)/i.test(l));
  if (insufficient) return `insufficient funds: ${insufficient}`;
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

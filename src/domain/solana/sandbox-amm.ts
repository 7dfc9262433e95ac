import { address, getBase58Decoder } from '@solana/kit';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction } from '@solana/spl-token';
import { PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import type { LiteSVM } from 'litesvm';
import { badInput, DomainError } from '../errors.js';
import {
  type ExchangeProvider,
  type ProviderQuote,
  type QuoteRequest,
  type RouteHop,
  type SwapExecution,
  type SwapOrder,
  thresholdOf,
} from './exchange-provider.js';
import { parseTokenAccount } from './litesvm-chain.js';
import type { SolanaNetwork } from './networks.js';
import { type HopAmounts, inGivenOut, outGivenIn, POOL_FEE_BPS, priceImpact } from '../chain/pool-math.js';
import type { SandboxChainStore } from './sandbox-chain-store.js';
import { SANDBOX_POOLS, type SandboxPool, SOL, STABLE_USD, tokenByMint, tokenBySymbol } from './sandbox-world.js';
import { checkSandboxBalance, priceMoved } from './swap-checks.js';
import { associatedTokenAddress } from './token-accounts.js';
import { withReference } from './transfer-view.js';

export const SANDBOX_DEX = 'Partner Gateway Sandbox AMM';
const base58 = getBase58Decoder();

interface Leg {
  pool: SandboxPool;
  inputMint: string;
  outputMint: string;
}

interface Priced {
  legs: Leg[];
  amounts: HopAmounts[];
  impact: number;
}

/** A route with its amounts, computed against given reserves. */
export interface SandboxRoute extends Priced {
  request: QuoteRequest;
}

/**
 * The sandbox market: constant-product pools whose reserves are the on-chain balances of their
 * market-maker wallets. Routes take at most two hops; a swap is one transaction moving real tokens
 * both ways, signed by the user and the pools' wallets.
 */
export class SandboxAmm implements ExchangeProvider {
  readonly name = 'sandbox';
  /** Executed at once: the sandbox chain confirms as it runs. */
  readonly estimatedSwapSeconds = 1;

  constructor(private readonly store: SandboxChainStore) {}

  /** Each pool keeps POOL_FEE_BPS of what passes through it. */
  feeFraction(quote: ProviderQuote): number {
    return 1 - (1 - Number(POOL_FEE_BPS) / 10_000) ** quote.hops.length;
  }

  /** The wallet's, and one per pool's market-maker wallet. */
  signatures(quote: ProviderQuote): number {
    return 1 + quote.hops.length;
  }

  /**
   * Runs the swap on the sandbox chain as one atomic transaction, priced on the chain it runs on
   * (the reserves cannot move between the check and the swap), and records it with the chain's new
   * state in one short commit; a refusal there (the quote already taken) undoes it on the chain.
   */
  async execute(order: SwapOrder): Promise<SwapExecution> {
    const { request, threshold, view } = order;
    const recorded = await this.store.change(order.network, async (chain) => {
      const route = this.routeOn(chain.svm, request);
      const inRaw = route.amounts[0]!.amountIn;
      const outRaw = route.amounts.at(-1)!.amountOut;
      if (request.swapMode === 'ExactIn' ? outRaw < threshold : inRaw > threshold) throw priceMoved(view);
      const user = new PublicKey(order.walletAddress);
      const { instructions, poolSigners } = this.instructions(route, user);
      withReference(instructions[0]!);
      const transaction = new Transaction({
        feePayer: user,
        blockhash: chain.blockhash,
        lastValidBlockHeight: 0,
      }).add(...instructions);
      checkSandboxBalance(chain.svm, order.walletAddress, request.inputAsset, inRaw, view);
      transaction.partialSign(...poolSigners);
      transaction.addSignature(user, Buffer.from(await order.sign(transaction.serializeMessage())));
      try {
        chain.run(transaction.serialize());
      } catch (error) {
        throw new DomainError(
          'INSUFFICIENT_FUNDS',
          `The swap would fail on chain, so nothing moved: ${(error as Error).message}`,
          { field: 'amount' },
        );
      }
      const executed = {
        inRaw,
        outRaw,
        hash: base58.decode(transaction.signatures[0]!.signature!),
        wire: transaction.serialize().toString('base64'),
      };
      return (tx) => order.record(tx, executed);
    });
    return { recorded };
  }

  async quote(network: SolanaNetwork, request: QuoteRequest): Promise<ProviderQuote> {
    const route = await this.store.read(network, (svm) => bestRoute(svm, request));
    return toProviderQuote(route);
  }

  async usdPrices(network: SolanaNetwork, mints: string[]): Promise<Map<string, number>> {
    return this.store.read(network, (svm) => {
      const prices = new Map<string, number>();
      for (const [symbol, usd] of Object.entries(STABLE_USD)) prices.set(tokenBySymbol(symbol)!.address, usd);
      const solUsdc = SANDBOX_POOLS.find((p) => p.name === 'SOL/USDC')!;
      const [sol, usdc] = reservesOf(svm, solUsdc);
      const solUsd = Number(usdc) / 1e6 / (Number(sol) / 1e9);
      prices.set(SOL.address, solUsd);
      const solBonk = SANDBOX_POOLS.find((p) => p.name === 'SOL/BONK')!;
      const [sol2, bonk] = reservesOf(svm, solBonk);
      prices.set(tokenBySymbol('BONK')!.address, (Number(sol2) / 1e9 / (Number(bonk) / 1e5)) * solUsd);
      return new Map(mints.filter((m) => prices.has(m)).map((m) => [m, prices.get(m)!]));
    });
  }

  /** Prices the request against the reserves of `svm` (when swapping: the chain the swap then runs on). */
  routeOn(svm: LiteSVM, request: QuoteRequest): SandboxRoute {
    return bestRoute(svm, request);
  }

  /** The instructions of a priced route for `user`; the pools' wallets must sign too. */
  instructions(
    route: SandboxRoute,
    user: PublicKey,
  ): { instructions: TransactionInstruction[]; poolSigners: SandboxPool['wallet'][] } {
    const instructions: TransactionInstruction[] = [];
    route.legs.forEach((leg, i) => {
      const amounts = route.amounts[i]!;
      const receiver = i === route.legs.length - 1 ? user : route.legs[i + 1]!.pool.wallet.publicKey;
      // The previous pool pays this pool; only the first leg's input comes from the user.
      if (i === 0) instructions.push(...move(leg.inputMint, amounts.amountIn, user, leg.pool.wallet.publicKey, user));
      instructions.push(...move(leg.outputMint, amounts.amountOut, leg.pool.wallet.publicKey, receiver, user));
    });
    return { instructions, poolSigners: route.legs.map((l) => l.pool.wallet) };
  }
}

/** Moves SOL or a token from one wallet to another; the receiver's token account is created if missing (the user pays its rent). */
function move(
  mint: string,
  raw: bigint,
  from: PublicKey,
  to: PublicKey,
  feePayer: PublicKey,
): TransactionInstruction[] {
  if (mint === SOL.address) return [SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: raw })];
  const token = tokenByMint(mint)!;
  const mintKey = new PublicKey(mint);
  const source = associatedTokenAddress(mintKey, from);
  const destination = associatedTokenAddress(mintKey, to);
  return [
    createAssociatedTokenAccountIdempotentInstruction(feePayer, destination, to, mintKey),
    createTransferCheckedInstruction(source, mintKey, destination, from, raw, token.decimals),
  ];
}

/** A pool's reserves [a, b] in raw units: token balances, and SOL above the wallet's rent reserve. */
export function reservesOf(svm: LiteSVM, pool: SandboxPool): [bigint, bigint] {
  const side = (symbol: string) => {
    const token = tokenBySymbol(symbol)!;
    if (token === SOL)
      return (svm.getBalance(address(pool.wallet.publicKey.toBase58())) ?? 0n) - svm.minimumBalanceForRentExemption(0n);
    const ata = associatedTokenAddress(token.address, pool.wallet.publicKey);
    const account = svm.getAccount(address(ata.toBase58()));
    return account.exists ? parseTokenAccount(account.data).amount : 0n;
  };
  return [side(pool.a), side(pool.b)];
}

function routesBetween(inputMint: string, outputMint: string): Leg[][] {
  const legOf = (from: string, to: string): Leg | undefined => {
    const [a, b] = [tokenByMint(from)?.symbol, tokenByMint(to)?.symbol];
    const pool = SANDBOX_POOLS.find((p) => (p.a === a && p.b === b) || (p.a === b && p.b === a));
    return pool ? { pool, inputMint: from, outputMint: to } : undefined;
  };
  const routes: Leg[][] = [];
  const direct = legOf(inputMint, outputMint);
  if (direct) routes.push([direct]);
  for (const middle of [SOL.address, tokenBySymbol('USDC')!.address]) {
    if (middle === inputMint || middle === outputMint) continue;
    const first = legOf(inputMint, middle);
    const second = legOf(middle, outputMint);
    if (first && second) routes.push([first, second]);
  }
  return routes;
}

function price(svm: LiteSVM, legs: Leg[], request: QuoteRequest): Priced | undefined {
  const reserves = legs.map((leg) => {
    const [a, b] = reservesOf(svm, leg.pool);
    return tokenBySymbol(leg.pool.a)!.address === leg.inputMint ? [a, b] : [b, a];
  }) as Array<[bigint, bigint]>;
  const amounts: HopAmounts[] = [];
  if (request.swapMode === 'ExactIn') {
    let amount = request.amountRaw;
    for (const [rIn, rOut] of reserves) {
      const hop = outGivenIn(rIn, rOut, amount);
      if (hop.amountOut <= 0n) return undefined;
      amounts.push(hop);
      amount = hop.amountOut;
    }
  } else {
    let amount = request.amountRaw;
    for (const [rIn, rOut] of [...reserves].reverse()) {
      const hop = inGivenOut(rIn, rOut, amount);
      if (!hop) return undefined;
      amounts.unshift(hop);
      amount = hop.amountIn;
    }
  }
  const impact = 1 - amounts.reduce((keep, hop, i) => keep * (1 - priceImpact(reserves[i]![0], hop)), 1);
  return { legs, amounts, impact };
}

function bestRoute(svm: LiteSVM, request: QuoteRequest): SandboxRoute {
  if (!tokenByMint(request.inputAsset))
    throw badInput('inputMint', 'inputMint is not a sandbox token (see docs/sandbox.md for the sandbox mints).');
  if (!tokenByMint(request.outputAsset))
    throw badInput('outputMint', 'outputMint is not a sandbox token (see docs/sandbox.md for the sandbox mints).');
  if (request.inputAsset === request.outputAsset)
    throw badInput('outputMint', 'outputMint must differ from inputMint.');
  const priced = routesBetween(request.inputAsset, request.outputAsset)
    .map((legs) => price(svm, legs, request))
    .filter((p): p is Priced => p !== undefined);
  if (priced.length === 0)
    throw new DomainError('BAD_USER_INPUT', 'The pools cannot fill this amount: not enough liquidity.', {
      field: 'amount',
    });
  const better = (a: Priced, b: Priced) =>
    request.swapMode === 'ExactIn'
      ? a.amounts.at(-1)!.amountOut >= b.amounts.at(-1)!.amountOut
        ? a
        : b
      : a.amounts[0]!.amountIn <= b.amounts[0]!.amountIn
        ? a
        : b;
  return { ...priced.reduce(better), request };
}

function toProviderQuote(route: SandboxRoute): ProviderQuote {
  const { request } = route;
  const inAmountRaw = route.amounts[0]!.amountIn;
  const outAmountRaw = route.amounts.at(-1)!.amountOut;
  const hops: RouteHop[] = route.legs.map((leg, i) => ({
    dex: SANDBOX_DEX,
    inputAsset: leg.inputMint,
    outputAsset: leg.outputMint,
    inAmountRaw: route.amounts[i]!.amountIn,
    outAmountRaw: route.amounts[i]!.amountOut,
    feeRaw: route.amounts[i]!.fee,
  }));
  const threshold = thresholdOf(request.swapMode, inAmountRaw, outAmountRaw, request.slippageBps);
  return {
    inAmountRaw,
    outAmountRaw,
    otherAmountThresholdRaw: threshold,
    priceImpact: route.impact,
    hops,
    // The same shape as Jupiter's QuoteResponse, so clients read one format in both environments.
    raw: {
      inputMint: request.inputAsset,
      inAmount: inAmountRaw.toString(),
      outputMint: request.outputAsset,
      outAmount: outAmountRaw.toString(),
      otherAmountThreshold: threshold.toString(),
      swapMode: request.swapMode,
      slippageBps: request.slippageBps,
      platformFee: null,
      priceImpactPct: route.impact.toString(),
      routePlan: hops.map((hop, i) => ({
        swapInfo: {
          ammKey: route.legs[i]!.pool.wallet.publicKey.toBase58(),
          label: hop.dex,
          inputMint: hop.inputAsset,
          outputMint: hop.outputAsset,
          inAmount: hop.inAmountRaw.toString(),
          outAmount: hop.outAmountRaw.toString(),
          feeAmount: hop.feeRaw.toString(),
          feeMint: hop.inputAsset,
        },
        percent: 100,
      })),
    },
  };
}

import { and, eq } from 'drizzle-orm';
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { chainSends } from '../../db/chain-schema.js';
import type { Database } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import type { ProviderQuote, QuoteRequest } from '../chain/exchange.js';
import { chainQuoteStore } from '../chain/quote-store.js';
import { DomainError } from '../errors.js';
import { formatUnits } from '../money/decimal.js';
import type { EvmChain } from './evm-chain.js';
import {
  APPROVE_GAS,
  type EvmExchangeProvider,
  type EvmSwapQuoteView,
  isNative,
  routerCall,
  SWAP_GAS_BASE,
  SWAP_GAS_PER_HOP,
} from './evm-exchange-provider.js';
import { evmSendStore } from './evm-send-store.js';
import type { EvmSendView } from './evm-send-view.js';
import { hexBytes } from './evm-signing.js';
import { type EvmTransfers, type Outgoing, widestDataFee } from './evm-transfers.js';
import { EVM, type EvmWalletRow } from './evm-wallets.js';
import { ALLOWANCE_ABI } from './exchange-contracts.js';
import { EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';

/** What a stored EVM quote keeps besides its view: the request to price again, and its least output. */
export interface StoredEvmQuote {
  view: EvmSwapQuoteView;
  request: Omit<QuoteRequest, 'amountRaw'> & { amountRaw: string };
  thresholdRaw: string;
}

/** A swap as the API answers it: its status is its swap leg's; `legs` are its transactions in nonce order. */
export interface EvmSwapResult {
  quoteId: string;
  network: EvmNetwork;
  status: EvmSendView['status'];
  /** The Router02 call's hash. */
  hash: string;
  txUrl: string;
  inputAmount: string;
  /** What the pools paid once mined; the quote's expectation while pending. */
  outputAmount: string;
  outputAmountRaw: bigint;
  legs: EvmSendView[];
}

export interface SwapRun {
  principal: Principal;
  network: EvmNetwork;
  quoteId: string;
  stored: StoredEvmQuote;
  wallet: EvmWalletRow;
  provider: EvmExchangeProvider;
  chain: EvmChain;
  transfers: EvmTransfers;
  /** Marks the quote executed (CONFLICT if another swap did) and ties the request's key to it. */
  takeQuote(): Promise<void>;
  db: Database;
}

/**
 * Runs a stored quote: priced again on the pools (PRICE_MOVED, unsigned, beyond its slippage),
 * taken once, then its legs signed and sent in nonce order as sends are, each with its fee held:
 * for a token sold, its approval to Router02 of exactly the amount (after a reset to 0 where the
 * token needs one and an allowance is left), then the router call, whose `amountOutMin` is the
 * quote's threshold. The router spends the whole approval, so none is left; a swap that fails
 * after its approval resets the approval to 0.
 */
export async function executeSwap(run: SwapRun): Promise<EvmSwapResult> {
  const { stored, wallet, chain, network } = run;
  const request: QuoteRequest = { ...stored.request, amountRaw: BigInt(stored.request.amountRaw) };
  const view = stored.view;
  const tokenIn = isNative(request.inputAsset) ? undefined : tokenSpec(network, view.fromToken.symbol);
  const held = tokenIn
    ? await chain.tokenBalance(wallet.address, request.inputAsset)
    : await chain.nativeBalance(wallet.address);
  if (held < request.amountRaw)
    throw new DomainError(
      'INSUFFICIENT_FUNDS',
      `Insufficient ${view.fromToken.symbol} on ${network} for this swap: it needs ${view.amounts.inputAmount}, the wallet holds ${formatUnits(held, view.fromToken.decimals)}.`,
      { field: 'amount' },
    );
  const execution = await run.provider.execute({
    network,
    request,
    threshold: BigInt(stored.thresholdRaw),
    view,
    walletAddress: wallet.address,
    sign: () => Promise.reject(new Error('An EVM swap is signed as a send.')),
    takeQuote: run.takeQuote,
    record: () => Promise.reject(new Error('No EVM venue records a swap itself.')),
  });
  if (!('send' in execution)) throw new Error('The EVM exchange answered no transaction to send.');
  const { send } = execution;
  const router = run.provider.router(network);
  const legs: EvmSendView[] = [];
  const token = tokenIn && { spec: tokenIn, contract: request.inputAsset };
  const approve = (amount: bigint): Outgoing => ({
    network,
    kind: 'approve',
    to: router,
    token: token!,
    amountRaw: amount,
    decimals: tokenIn!.decimals,
    call: approvalCall(request.inputAsset as Hex, router, amount),
  });
  const leg = async (outgoing: Outgoing) => {
    const sent = await run.transfers.submitLeg(run.principal, outgoing);
    legs.push(sent);
    return sent;
  };
  if (tokenIn) {
    const allowance = await allowanceOf(chain, request.inputAsset, wallet.address, router);
    if (needsReset(tokenIn, allowance, send.inAmountRaw)) await leg(approve(0n));
    if (allowance !== send.inAmountRaw) {
      const approved = await leg(approve(send.inAmountRaw));
      if (approved.status === 'failed' || approved.status === 'replaced')
        throw new DomainError('SERVICE_UNAVAILABLE', `The approval for this swap failed: ${approved.error}`);
    }
  }
  const hops = BigInt(view.route.hops);
  let swapped: EvmSendView;
  try {
    swapped = await leg({
      network,
      kind: 'swap',
      to: wallet.address as Hex,
      token: token ?? null,
      amountRaw: send.inAmountRaw,
      decimals: view.fromToken.decimals,
      call: {
        to: router,
        data: `0x${Buffer.from(send.unsigned).toString('hex')}`,
        value: tokenIn ? 0n : send.inAmountRaw,
      },
      swap: { outputAsset: request.outputAsset, outputAmountRaw: send.outAmountRaw, quoteId: run.quoteId },
      // Signed before its approval is mined (on a chain slower than the sandbox's), it cannot be estimated yet.
      fallbackGas: ((SWAP_GAS_BASE + SWAP_GAS_PER_HOP * hops) * 3n) / 2n,
    });
  } catch (error) {
    if (tokenIn) await leg(approve(0n)).catch(() => undefined);
    throw error;
  }
  if (tokenIn && (swapped.status === 'failed' || swapped.status === 'replaced'))
    await leg(approve(0n)).catch(() => undefined);
  return resultOf(run.db, run.quoteId, view, legs, swapped);
}

/** The approval a swap signs for the token it sells: `approve(router, amount)`. */
const approvalCall = (token: Hex, router: Hex, amount: bigint): Outgoing['call'] => ({
  to: token,
  data: encodeFunctionData({ abi: ALLOWANCE_ABI, functionName: 'approve', args: [router, amount] }),
  value: 0n,
});

/** Whether an approval of `amount` must reset a leftover allowance to 0 first (the token requires it). */
const needsReset = (token: EvmTokenSpec, allowance: bigint, amount: bigint) =>
  token.approveFromZero === true && allowance !== 0n && allowance !== amount;

/** What a quote expects a swap to pay the network, in the native coin's smallest unit. */
export interface SwapNetworkFee {
  /** Gas of every leg at the base fee plus tip. */
  gasWei: bigint;
  /** The data fee of every leg, at its largest once signed (0 where the network charges none). */
  dataFeeWei: bigint;
}

/**
 * The network fee of a swap as its quote states it: the legs `executeSwap` will sign (for a token
 * sold, its approval of the amount, after a reset to 0 where the token needs one and an allowance
 * is left now; then the Router02 call of the quote's route), each at the gas it is expected to burn
 * (APPROVE_GAS; the router call's SWAP_GAS_BASE plus SWAP_GAS_PER_HOP a hop) at the base fee plus
 * tip and, on networks that charge one, its data fee at the largest the signed transaction can be
 * (evm-transfers.ts `widestDataFee`, as a send holds it).
 */
export async function swapNetworkFee(f: {
  network: EvmNetwork;
  chain: EvmChain;
  router: Hex;
  wallet: Hex;
  quote: ProviderQuote;
  token: EvmTokenSpec | undefined;
  terms: { baseFeePerGas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
}): Promise<SwapNetworkFee> {
  const { quote, token } = f;
  const input = quote.hops[0]!.inputAsset as Hex;
  const legs: Array<{ call: Outgoing['call']; gas: bigint }> = [];
  if (token) {
    // The router spends every approval, so none is normally left: the allowance is read only where
    // a leftover one would add a reset.
    const allowance = token.approveFromZero ? await allowanceOf(f.chain, input, f.wallet, f.router) : 0n;
    if (needsReset(token, allowance, quote.inAmountRaw))
      legs.push({ call: approvalCall(input, f.router, 0n), gas: APPROVE_GAS });
    legs.push({ call: approvalCall(input, f.router, quote.inAmountRaw), gas: APPROVE_GAS });
  }
  legs.push({
    call: {
      to: f.router,
      data: routerCall(f.wallet, quote, quote.otherAmountThresholdRaw),
      value: token ? 0n : quote.inAmountRaw,
    },
    gas: SWAP_GAS_BASE + SWAP_GAS_PER_HOP * BigInt(quote.hops.length),
  });
  const perGas = f.terms.baseFeePerGas + f.terms.maxPriorityFeePerGas;
  const dataFees = await Promise.all(
    legs.map((leg) =>
      widestDataFee(f.chain, f.network, leg.call, {
        gas: leg.gas,
        maxFeePerGas: f.terms.maxFeePerGas,
        maxPriorityFeePerGas: f.terms.maxPriorityFeePerGas,
      }),
    ),
  );
  return {
    gasWei: legs.reduce((sum, leg) => sum + leg.gas * perGas, 0n),
    dataFeeWei: dataFees.reduce((sum, fee) => sum + fee, 0n),
  };
}

/** The answer for a swap whose request key was taken over after a crash: its swap leg, as stored. */
export async function swapResultOf(
  db: Database,
  transfers: EvmTransfers,
  principal: Principal,
  quoteId: string,
): Promise<EvmSwapResult> {
  const record = await chainQuoteStore(EVM).find<StoredEvmQuote>(db, principal, quoteId);
  const [row] = await db
    .select({ id: chainSends.id })
    .from(chainSends)
    .where(and(eq(chainSends.quoteId, quoteId), eq(chainSends.family, EVM)));
  const swapped = row ? await transfers.byId(principal, row.id) : null;
  if (!swapped)
    throw new DomainError(
      'CONFLICT',
      `Quote ${quoteId} was taken by this request before it was interrupted, and no swap was signed: ask for a new quote.`,
      { field: 'quoteId' },
    );
  return resultOf(db, quoteId, record.stored.view, [swapped], swapped);
}

async function resultOf(
  db: Database,
  quoteId: string,
  view: EvmSwapQuoteView,
  legs: EvmSendView[],
  swapped: EvmSendView,
): Promise<EvmSwapResult> {
  const row = await evmSendStore.findTransfer(db, swapped.id);
  const outputRaw = row?.outputAmountRaw ?? 0n;
  return {
    quoteId,
    network: view.network,
    status: swapped.status,
    hash: swapped.hash,
    txUrl: swapped.txUrl,
    inputAmount: swapped.amount,
    outputAmount: formatUnits(outputRaw, view.toToken.decimals),
    outputAmountRaw: outputRaw,
    legs,
  };
}

function tokenSpec(network: EvmNetwork, symbol: string): EvmTokenSpec {
  return EVM_NETWORK_SPECS[network].tokens.find((t) => t.symbol === symbol)!;
}

async function allowanceOf(chain: EvmChain, token: string, owner: string, router: Hex): Promise<bigint> {
  const data = await chain.call({
    to: token,
    data: hexBytes(encodeFunctionData({ abi: ALLOWANCE_ABI, functionName: 'allowance', args: [owner as Hex, router] })),
  });
  return decodeFunctionResult({
    abi: ALLOWANCE_ABI,
    functionName: 'allowance',
    data: `0x${Buffer.from(data).toString('hex')}`,
  });
}

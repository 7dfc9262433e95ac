import { randomUUID } from 'node:crypto';
import { getAddress, type Hex } from 'viem';
import type { Database } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import { checkSlippage, type QuoteRequest } from '../chain/exchange.js';
import { chainQuoteStore, quoteExpired, quoteUsed } from '../chain/quote-store.js';
import { QUOTE_TTL_SECONDS, quoteView } from '../chain/swap-quote.js';
import { type Clock, type ClockFor, clockLookup } from '../clock.js';
import { badInput, DomainError } from '../errors.js';
import { checkFields } from '../field-checks.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { evmRawFromDecimal } from './evm-amounts.js';
import type { EvmChains } from './evm-chains.js';
import {
  type EvmExchangeProvider,
  type EvmSwapToken,
  type EvmSwapQuoteView,
  isNative,
} from './evm-exchange-provider.js';
import { type EvmSwapResult, executeSwap, type StoredEvmQuote, swapNetworkFee, swapResultOf } from './evm-swap-legs.js';
import type { EvmTransfers } from './evm-transfers.js';
import { EVM, type EvmWallets } from './evm-wallets.js';
import { EVM_NATIVE_ASSET } from './exchange-contracts.js';
import { checkEvmNetwork, EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';

/** The three directions the spec names, as the REST paths spell them. */
export const SWAP_DIRECTIONS = ['native-to-token', 'token-to-token', 'token-to-native'] as const;
export type SwapDirection = (typeof SWAP_DIRECTIONS)[number];

export interface EvmQuoteInput {
  /** The token sold (symbol or contract); not for native-to-token. */
  inputToken?: string | null;
  /** The token bought (symbol or contract); not for token-to-native. */
  outputToken?: string | null;
  /** In units of what is sold, a decimal string. */
  amount?: unknown;
  slippageBps?: number | null;
}

const quotes = chainQuoteStore(EVM);

/**
 * EVM quotes and swaps for custodial wallets, on the environment's exchange provider (the sandbox's
 * Uniswap V2 pools; production has none yet: 503). A quote is priced on the pools and stored for
 * its TTL; a swap executes a stored quote once: refused unsigned when it expired or the pools moved
 * beyond its slippage, else its approval and its Router02 call are signed and sent as sends are
 * (evm-swap-legs.ts).
 */
export class EvmExchange {
  private readonly clockFor: ClockFor;

  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    private readonly idempotency: Idempotency,
    private readonly wallets: EvmWallets,
    private readonly chains: EvmChains,
    private readonly transfers: EvmTransfers,
    private readonly providers: (environment: Principal['environment']) => EvmExchangeProvider | undefined,
  ) {
    this.clockFor = clockLookup(clock);
  }

  private provider(principal: Principal): EvmExchangeProvider {
    const provider = this.providers(principal.environment);
    if (!provider)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'EVM swaps are not available in production: no exchange is configured.',
      );
    return provider;
  }

  async quote(
    principal: Principal,
    networkArg: unknown,
    direction: SwapDirection,
    input: EvmQuoteInput,
  ): Promise<EvmSwapQuoteView> {
    const { network, from, to, slippageBps } = checkFields({
      network: () => checkEvmNetwork(networkArg as string),
      from: () =>
        direction === 'native-to-token'
          ? undefined
          : this.tokenOf(principal, networkArg, input.inputToken, 'inputToken'),
      to: () =>
        direction === 'token-to-native'
          ? undefined
          : this.tokenOf(principal, networkArg, input.outputToken, 'outputToken'),
      slippageBps: () => checkSlippage(input.slippageBps),
    });
    const fromInfo = this.infoOf(principal, network, from);
    const toInfo = this.infoOf(principal, network, to);
    const amountRaw = evmRawFromDecimal(input.amount, fromInfo.decimals);
    const request: QuoteRequest = {
      inputAsset: fromInfo.address,
      outputAsset: toInfo.address,
      amountRaw,
      swapMode: 'ExactIn',
      slippageBps,
    };
    const provider = this.provider(principal);
    const chain = this.chains.chainFor(principal.environment, network);
    const wallet = await this.wallets.walletOf(principal);
    const quote = await provider.quote(network, request);
    const [prices, balance, terms] = await Promise.all([
      provider.usdPrices(network, [fromInfo.address, toInfo.address, EVM_NATIVE_ASSET]),
      isNative(fromInfo.address)
        ? chain.nativeBalance(wallet.address)
        : chain.tokenBalance(wallet.address, fromInfo.address),
      chain.feeTerms(),
    ]);
    // What the legs are expected to pay the network: their gas at today's base fee and tip, and on
    // networks that charge one their data fees (evm-swap-legs.ts swapNetworkFee).
    const fee = await swapNetworkFee({
      network,
      chain,
      router: provider.router(network),
      wallet: wallet.address as Hex,
      quote,
      token: from,
      terms,
    });
    const feeWei = fee.gasWei + fee.dataFeeWei;
    const now = this.clockFor(principal).now();
    const symbols = (asset: string) =>
      [fromInfo, toInfo].find((t) => t.address.toLowerCase() === asset.toLowerCase())?.symbol ??
      EVM_NETWORK_SPECS[network].tokens.find(
        (t) => this.chains.tokenContract(principal.environment, network, t).toLowerCase() === asset.toLowerCase(),
      )?.symbol ??
      asset;
    const view = quoteView({
      quoteId: randomUUID(),
      network,
      request,
      from: fromInfo,
      to: toInfo,
      quote,
      prices,
      feeFraction: provider.feeFraction(quote),
      gas: { amount: Number(feeWei) / 1e18, usd: prices.get(EVM_NATIVE_ASSET) },
      estimatedSwapSeconds: provider.estimatedSwapSeconds,
      symbols,
      inputBalanceRaw: balance,
      now,
    });
    const stored: StoredEvmQuote = {
      view,
      request: { ...request, amountRaw: amountRaw.toString() },
      thresholdRaw: quote.otherAmountThresholdRaw.toString(),
    };
    await quotes.insert(this.db, principal, {
      id: view.quoteId,
      network,
      stored,
      expiresAt: new Date(now.getTime() + QUOTE_TTL_SECONDS * 1000),
    });
    return view;
  }

  /**
   * Executes a stored quote on its network, once. Honours Idempotency-Key: a repeat answers the
   * first swap; the quote is taken (a conditional update) before anything is signed, so of two
   * requests racing on one quote exactly one signs.
   */
  async swap(
    principal: Principal,
    networkArg: unknown,
    input: { quoteId?: unknown },
    idempotencyKey: string | undefined,
  ): Promise<EvmSwapResult> {
    const { network, quoteId } = checkFields({
      network: () => checkEvmNetwork(networkArg as string),
      quoteId: () => {
        if (typeof input.quoteId !== 'string' || input.quoteId === '')
          throw badInput('quoteId', 'quoteId is required: ask for a quote first.');
        return input.quoteId;
      },
    });
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'evm.swap' };
    return this.idempotency.run(scope, idempotencyKey, { network, quoteId }, async (claim) => {
      if (claim?.resourceId) return swapResultOf(this.db, this.transfers, principal, claim.resourceId);
      const record = await quotes.find<StoredEvmQuote>(this.db, principal, quoteId);
      if (record.network !== network)
        throw badInput('quoteId', `Quote ${quoteId} is for ${record.network}, not ${network}.`);
      if (record.executedAt) throw quoteUsed(quoteId);
      const now = this.clockFor(principal).now();
      if (record.expiresAt.getTime() <= now.getTime()) throw quoteExpired(quoteId, record.expiresAt);
      const wallet = await this.wallets.walletOf(principal);
      return executeSwap({
        principal,
        network: network as EvmNetwork,
        quoteId,
        stored: record.stored,
        wallet,
        provider: this.provider(principal),
        chain: this.chains.chainFor(principal.environment, network),
        transfers: this.transfers,
        takeQuote: () =>
          this.db.transaction(async (tx) => {
            await quotes.take(tx, quoteId, this.clockFor(principal).now());
            await this.idempotency.attach(tx, claim, quoteId);
          }),
        db: this.db,
      });
    });
  }

  /** A side of a swap as the quote shows it: a token by its contract here, the native coin by EVM_NATIVE_ASSET. */
  private infoOf(principal: Principal, network: EvmNetwork, token: EvmTokenSpec | undefined): EvmSwapToken {
    if (!token) {
      const coin = EVM_NETWORK_SPECS[network].native;
      return {
        address: EVM_NATIVE_ASSET,
        symbol: coin.symbol,
        name: coin.name,
        decimals: coin.decimals,
        wrapsNative: false,
      };
    }
    return {
      address: getAddress(this.chains.tokenContract(principal.environment, network, token)),
      symbol: token.symbol,
      name: token.name,
      decimals: token.decimals,
      wrapsNative: token.wrapsNative ?? false,
    };
  }

  /**
   * A supported token of the network named by its symbol (any case) or its contract; the wrapped
   * native coin is a token like any other here (native-to-WETH is wrapping, refused by the route).
   */
  private tokenOf(
    principal: Principal,
    networkArg: unknown,
    value: string | null | undefined,
    field: string,
  ): EvmTokenSpec {
    const network = checkEvmNetwork(networkArg as string);
    const tokens = EVM_NETWORK_SPECS[network].tokens;
    if (typeof value === 'string' && /^0x[0-9a-fA-F]{40}$/.test(value)) {
      const found = tokens.find(
        (t) => this.chains.tokenContract(principal.environment, network, t).toLowerCase() === value.toLowerCase(),
      );
      if (found) return found;
    } else {
      const found = tokens.find((t) => t.symbol === value?.toUpperCase());
      if (found) return found;
    }
    throw badInput(
      field,
      `${field} must be one of ${tokens.map((t) => t.symbol).join(', ')} on ${network} (a symbol or its contract).`,
    );
  }
}

import { VersionedTransaction } from '@solana/web3.js';
import { DomainError } from '../errors.js';
import { type AnswerShape, readAnswerPart } from '../upstream/answer-shape.js';
import { requestUpstream } from '../upstream/http.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { PRICES, QUOTE, SWAP } from './jupiter-answers.js';
import type { ExchangeProvider, ProviderQuote, QuoteRequest, SwapExecution, SwapOrder } from './exchange-provider.js';
import { priceMoved } from './swap-checks.js';
import type { SolanaNetwork } from './networks.js';

const JUPITER = { name: 'jupiter', label: 'The swap router (Jupiter)' };

/** Builds the transaction of a quote for a wallet to sign (Jupiter's POST /swap). */
export interface SwapBuilder {
  buildSwap(
    quoteResponse: Record<string, unknown>,
    userPublicKey: string,
  ): Promise<{ transaction: VersionedTransaction; lastValidBlockHeight: bigint }>;
}

export interface JupiterOptions {
  /** The Swap API base, e.g. https://api.jup.ag/swap/v1. */
  baseUrl: string;
  /** The Price API v3 endpoint, e.g. https://api.jup.ag/price/v3. */
  priceUrl: string;
  /** Optional: keyless requests are allowed at a low rate. */
  apiKey?: string | undefined;
  timeoutMs?: number;
  /** The longest a 429's reset is waited for before giving up on this request. */
  maxRateLimitWaitMs?: number;
}

/**
 * Jupiter's Swap API (Metis, v1) and Price API v3 (providers.md §2): quotes in raw units, the
 * QuoteResponse kept verbatim (its docs say to pass it back unchanged), swaps as unsigned
 * transactions. 400s are the caller's input (no route, bad mint); 429s are waited out once, up to a
 * bound, then answered 503 with the wait; other failures, and answers not in their documented shape
 * (jupiter-answers.ts), are 503.
 */
export class JupiterProvider implements ExchangeProvider, SwapBuilder {
  readonly name = 'jupiter';
  /** A mainnet transaction, sent and confirmed like any other. */
  readonly estimatedSwapSeconds = 15;

  constructor(private readonly options: JupiterOptions) {}

  /** Jupiter's quoted amounts already have its venues' fees taken. */
  feeFraction(): number {
    return 0;
  }

  /** The wallet's alone. */
  signatures(): number {
    return 1;
  }

  /**
   * Re-quotes and refuses a price beyond the order's threshold, takes the quote (kept whatever
   * follows: a quote executes at most once), and builds Jupiter's transaction for the wallet, to
   * be checked, signed, stored and sent by the caller.
   */
  async execute(order: SwapOrder): Promise<SwapExecution> {
    const fresh = await this.quote(order.network, order.request);
    if (
      order.request.swapMode === 'ExactIn' ? fresh.outAmountRaw < order.threshold : fresh.inAmountRaw > order.threshold
    )
      throw priceMoved(order.view);
    await order.takeQuote();
    const built = await this.buildSwap(fresh.raw, order.walletAddress);
    return {
      send: {
        unsigned: built.transaction.serialize(),
        validThroughHeight: built.lastValidBlockHeight,
        inAmountRaw: fresh.inAmountRaw,
        outAmountRaw: fresh.outAmountRaw,
      },
    };
  }

  async quote(network: SolanaNetwork, request: QuoteRequest): Promise<ProviderQuote> {
    if (network !== 'mainnet-beta')
      throw new DomainError('BAD_USER_INPUT', 'Swaps route on mainnet-beta only (Jupiter has no devnet or testnet).', {
        field: 'network',
      });
    const query = new URLSearchParams({
      inputMint: request.inputAsset,
      outputMint: request.outputAsset,
      amount: request.amountRaw.toString(),
      slippageBps: String(request.slippageBps),
      swapMode: request.swapMode,
    });
    const quote = await this.call(`${this.options.baseUrl}/quote?${query}`, QUOTE);
    // Kept verbatim, every field Jupiter sent: its docs say to pass the quote back unchanged.
    const raw = quote as typeof quote & Record<string, unknown>;
    return {
      inAmountRaw: BigInt(raw.inAmount),
      outAmountRaw: BigInt(raw.outAmount),
      otherAmountThresholdRaw: BigInt(raw.otherAmountThreshold),
      // A fraction, judging by Jupiter's examples (0.0001 on a deep pool); see providers.md.
      priceImpact: Math.abs(Number(raw.priceImpactPct) || 0),
      hops: raw.routePlan.map((step) => ({
        dex: step.swapInfo.label ?? 'Jupiter',
        inputAsset: step.swapInfo.inputMint,
        outputAsset: step.swapInfo.outputMint,
        inAmountRaw: BigInt(step.swapInfo.inAmount),
        outAmountRaw: BigInt(step.swapInfo.outAmount),
        feeRaw: BigInt(step.swapInfo.feeAmount ?? '0'),
      })),
      raw,
    };
  }

  async usdPrices(_network: SolanaNetwork, mints: string[]): Promise<Map<string, number>> {
    const unique = [...new Set(mints)].slice(0, 50);
    const body = await this.call(`${this.options.priceUrl}?ids=${unique.join(',')}`, PRICES);
    const prices = new Map<string, number>();
    for (const mint of unique) {
      const price = Object.hasOwn(body, mint) ? body[mint]?.usdPrice : undefined;
      if (typeof price === 'number') prices.set(mint, price);
    }
    return prices;
  }

  async buildSwap(quoteResponse: Record<string, unknown>, userPublicKey: string) {
    const body = await this.call(`${this.options.baseUrl}/swap`, SWAP, {
      method: 'POST',
      body: JSON.stringify({ quoteResponse, userPublicKey, wrapAndUnwrapSol: true, dynamicComputeUnitLimit: true }),
    });
    return {
      // Base64 that is no transaction is an answer not in its shape, like any other mismatch.
      transaction: readAnswerPart({ upstream: JUPITER, mutating: false }, '/swapTransaction', () =>
        VersionedTransaction.deserialize(Buffer.from(body.swapTransaction, 'base64')),
      ),
      lastValidBlockHeight: BigInt(body.lastValidBlockHeight),
    };
  }

  private async call<T>(
    url: string,
    shape: AnswerShape<T>,
    init: { method?: string; body?: string } = {},
    waited = false,
  ): Promise<T> {
    try {
      return await requestUpstream(
        {
          upstream: JUPITER,
          url,
          method: init.method ?? 'GET',
          headers: {
            accept: 'application/json',
            ...(init.body ? { 'content-type': 'application/json' } : {}),
            ...(this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {}),
          },
          body: init.body,
          timeoutMs: this.options.timeoutMs ?? 10_000,
          // Quotes, prices and unsigned transactions: nothing happens until the gateway signs and sends.
          mutating: false,
        },
        (status, body) =>
          status < 300
            ? { data: body }
            : { message: (body as { error?: string } | undefined)?.error ?? `HTTP ${status}`, field: 'amount' },
        shape,
      );
    } catch (error) {
      // A 429 is waited out once, up to a bound; a longer wait goes back to the caller as Retry-After.
      if (
        !waited &&
        error instanceof UpstreamError &&
        error.kind === 'rate_limited' &&
        (error.retryAfter ?? 1) * 1000 <= (this.options.maxRateLimitWaitMs ?? 2_000)
      ) {
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfter ?? 1) * 1000));
        return this.call(url, shape, init, true);
      }
      throw error;
    }
  }
}

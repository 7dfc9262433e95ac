import type { QuoteInput } from '../solana/exchange-service.js';
import type { SwapQuoteView } from '../solana/swap-quote.js';
import type { SwapQuotesDomain } from '../solana/swap-quotes-domain.js';
import type { Caller } from '../users/user-directory.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { SwapQuoteAnswer } from './swap-quote-answer.js';
import { askUpstream, credentialOf } from './upstream-json.js';

/**
 * Swap quotes in a facade: the spec's `GET /api/v1/solana-exchange/quote/token-to-token` with its
 * three query parameters (`inputMint`, `outputMint`, `amount`, the amount as the caller wrote it),
 * asked with the caller's own credential (an API key or a bearer token, as the spec allows there).
 */
export class UpstreamSwapQuotes implements SwapQuotesDomain {
  constructor(private readonly upstream: RestV1Upstream) {}

  async quote(caller: Caller, input: QuoteInput): Promise<SwapQuoteView> {
    const query = new URLSearchParams({
      inputMint: input.inputMint,
      outputMint: input.outputMint,
      amount: String(input.amount),
    });
    const answer = await askUpstream(
      this.upstream,
      {
        method: 'GET',
        path: `/api/v1/solana-exchange/quote/token-to-token?${query}`,
        credential: credentialOf(caller),
      },
      SwapQuoteAnswer,
    );
    const { rawQuote, ...quote } = answer.value.data;
    return { ...quote, ...(rawQuote ? { rawQuote } : {}) };
  }
}

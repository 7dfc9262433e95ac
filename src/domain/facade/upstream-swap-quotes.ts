import { badInput } from '../errors.js';
import type { QuoteInput, SwapRequest } from '../solana/exchange-service.js';
import { SOL_MINT } from '../solana/native-token.js';
import type { SwapSubmitted } from '../solana/solana-sends.js';
import type { SwapQuoteView } from '../solana/swap-quote.js';
import type { SwapQuotesDomain } from '../solana/swap-quotes-domain.js';
import type { Caller } from '../users/user-directory.js';
import { JsonNumberText } from './json-number-text.js';
import type { FacadeKeys } from './facade-keys.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { SwapAnswer } from './solana-answers.js';
import { SwapQuoteAnswer } from './swap-quote-answer.js';
import { askUpstream, credentialOf } from './upstream-json.js';

/**
 * The Solana exchange in a facade, asked with the caller's own credential (an API key or, for the
 * quote, a bearer token, as the spec allows there):
 * - quotes: the spec's `GET /api/v1/solana-exchange/quote/token-to-token` with its three query
 *   parameters (`inputMint`, `outputMint`, `amount`, the amount as the caller wrote it);
 * - swaps: the spec's `POST /api/v1/solana-exchange/swap-token-to-sol`, which its title says swaps
 *   SOL into `outputMint` (its path names the opposite direction), with `outputMint`, `amount` (a
 *   JSON number, written with the caller's digits) and `slippageBps`. Sent once with the caller's
 *   Idempotency-Key, under the facade's record of it (facade-keys.ts).
 */
export class UpstreamSwapQuotes implements SwapQuotesDomain {
  constructor(
    private readonly upstream: RestV1Upstream,
    /** The facade's record per Idempotency-Key (facade-keys.ts); without it a send is simply sent once. */
    private readonly keys?: FacadeKeys,
  ) {}

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

  async swap(caller: Caller, input: SwapRequest, idempotencyKey: string | undefined): Promise<SwapSubmitted> {
    // The spec's swap sells SOL only: another input would be swapped as SOL, so it is refused.
    if (input.inputMint !== SOL_MINT)
      throw badInput('inputMint', `inputMint must be ${SOL_MINT} (SOL): the upstream's swap sells SOL only.`);
    if (!input.outputMint) throw badInput('outputMint', 'outputMint is required.');
    const amount = typeof input.amount === 'string' ? JsonNumberText.of(input.amount) : undefined;
    if (!amount) throw badInput('amount', 'amount must be a decimal number of SOL such as "0.5".');
    const body: Record<string, unknown> = {
      outputMint: input.outputMint,
      amount,
      ...(input.slippageBps === undefined || input.slippageBps === null ? {} : { slippageBps: input.slippageBps }),
    };
    const credential = credentialOf(caller);
    const send = async (key: string | undefined) => {
      const answer = await askUpstream(
        this.upstream,
        {
          method: 'POST',
          path: '/api/v1/solana-exchange/swap-token-to-sol',
          credential,
          body,
          idempotencyKey: key,
        },
        SwapAnswer,
      );
      return { signature: answer.value.data.signature, txUrl: answer.value.data.txUrl };
    };
    if (!this.keys) return send(idempotencyKey);
    return this.keys.run(caller, { operation: 'solana.swap', key: idempotencyKey, input: body, send });
  }
}

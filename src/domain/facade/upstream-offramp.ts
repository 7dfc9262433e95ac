import type { OfframpDomain } from '../offramp/offramp-domain.js';
import type { OfframpAsset } from '../offramp/offramp-provider.js';
import type { OfframpQuote, QuoteInput } from '../offramp/offramp-service.js';
import type { Caller } from '../users/user-directory.js';
import { OfframpAssetsAnswer, OfframpQuoteAnswer } from './offramp-answers.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, credentialOf } from './upstream-json.js';

/**
 * The offramp of a facade: the spec's `GET /api/v1/offramp/exchange/assets` and
 * `.../quote`, asked with the caller's own credential. The spec names the quote's four query
 * parameters by meaning only; they are sent as this gateway's REST names them (token, network,
 * amount, fiat).
 */
export class UpstreamOfframp implements OfframpDomain {
  constructor(private readonly upstream: RestV1Upstream) {}

  async assets(caller: Caller): Promise<OfframpAsset[]> {
    const answer = await askUpstream(
      this.upstream,
      { method: 'GET', path: '/api/v1/offramp/exchange/assets', credential: credentialOf(caller) },
      OfframpAssetsAnswer,
    );
    return answer.value.data.map(({ token, network, contractAddress, decimals }) => ({
      token,
      network,
      contractAddress,
      decimals,
    }));
  }

  async quote(caller: Caller, input: QuoteInput): Promise<OfframpQuote> {
    const query = new URLSearchParams({
      token: input.token,
      network: input.network,
      amount: String(input.amount),
      fiat: input.fiat,
    });
    const answer = await askUpstream(
      this.upstream,
      { method: 'GET', path: `/api/v1/offramp/exchange/quote?${query}`, credential: credentialOf(caller) },
      OfframpQuoteAnswer,
    );
    const { token, amount, network, fiat, rate } = answer.value;
    return { token, amount, network, fiat, rate };
  }
}

import { Type } from '@sinclair/typebox';
import { FIAT_CURRENCIES, OFFRAMP_NETWORKS, OFFRAMP_TOKENS } from '../offramp/catalogue.js';
import { answerShape } from '../upstream/answer-shape.js';

const Token = Type.Union(OFFRAMP_TOKENS.map((t) => Type.Literal(t)));
const Network = Type.Union(OFFRAMP_NETWORKS.map((n) => Type.Literal(n)));
const Fiat = Type.Union(FIAT_CURRENCIES.map((f) => Type.Literal(f)));

/** `GET /api/v1/offramp/exchange/quote`: the offramp quote, not wrapped in the envelope (the spec's own words). */
export const OfframpQuoteAnswer = answerShape(
  Type.Object({
    token: Token,
    amount: Type.Number({ minimum: 0 }),
    network: Network,
    fiat: Fiat,
    rate: Type.Number({ minimum: 0 }),
  }),
);

/**
 * `GET /api/v1/offramp/exchange/assets`: the spec shows no body ("supported crypto and network
 * pairs"); the facade reads it as this gateway's REST answers it, the envelope with the pairs as
 * `data`, each with its contract address and decimals.
 */
export const OfframpAssetsAnswer = answerShape(
  Type.Object({
    data: Type.Array(
      Type.Object({
        token: Token,
        network: Network,
        contractAddress: Type.String(),
        decimals: Type.Integer({ minimum: 0, maximum: 36 }),
      }),
    ),
  }),
);

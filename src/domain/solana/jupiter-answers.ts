import { Type } from '@sinclair/typebox';
import { answerShape, Maybe, RawUnits, SafeInteger } from '../upstream/answer-shape.js';

/**
 * The documented shapes of Jupiter's answers (its OpenAPI swap/v1 and Price API v3;
 * shared/providers.md §2), as the adapter reads them. Only what the adapter reads is required: a
 * quote is otherwise kept verbatim and passed back unchanged, whatever else it carries.
 */

/** `GET /quote`: a `QuoteResponse`, amounts in raw units as strings. */
export const QUOTE = answerShape(
  Type.Object({
    inAmount: RawUnits,
    outAmount: RawUnits,
    otherAmountThreshold: RawUnits,
    priceImpactPct: Type.String(),
    routePlan: Type.Array(
      Type.Object({
        swapInfo: Type.Object({
          label: Maybe(Type.String()),
          inputMint: Type.String(),
          outputMint: Type.String(),
          inAmount: RawUnits,
          outAmount: RawUnits,
          feeAmount: Maybe(RawUnits),
        }),
      }),
    ),
  }),
);

/** Price API v3 `GET ?ids=`: `{<mint>: {usdPrice, …}}`, a token without a reliable price left out. */
export const PRICES = answerShape(
  Type.Record(Type.String(), Type.Object({ usdPrice: Maybe(Type.Number({ minimum: 0 })) })),
);

/** `POST /swap`: the unsigned transaction (base64) and the block height it is valid until. */
export const SWAP = answerShape(
  Type.Object({
    swapTransaction: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9+/]+={0,2}$' }),
    lastValidBlockHeight: Type.Union([SafeInteger, RawUnits]),
  }),
);

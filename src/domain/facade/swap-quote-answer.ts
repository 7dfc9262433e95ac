import { Type } from '@sinclair/typebox';
import { SOLANA_NETWORKS } from '../solana/networks.js';
import { answerShape } from '../upstream/answer-shape.js';

const Token = Type.Object({
  address: Type.String({ minLength: 1 }),
  symbol: Type.String(),
  decimals: Type.Integer({ minimum: 0, maximum: 36 }),
  name: Type.String(),
  logoUri: Type.Optional(Type.String()),
});
const Strings = <K extends string>(...names: K[]) =>
  Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()])) as Record<K, ReturnType<typeof Type.String>>);

/**
 * The spec's swap quote (Resources: swap quote), in the envelope: every field but `rawQuote` is
 * required. `network` is the cluster's name as this gateway writes it (the spec says "chain name").
 */
export const SwapQuoteAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      quoteId: Type.String({ minLength: 1 }),
      swapMode: Type.Union([Type.Literal('ExactIn'), Type.Literal('ExactOut')]),
      fromToken: Token,
      toToken: Token,
      amounts: Strings('inputAmount', 'outputAmount', 'minOutputAmount', 'inputAmountRaw', 'outputAmountRaw'),
      rates: Strings('rate', 'reverseRate', 'usdRate'),
      fees: Strings(
        'protocolFeePercent',
        'protocolFeeAmount',
        'platformFeePercent',
        'totalFeePercent',
        'totalFeeAmount',
        'gasFee',
        'totalCost',
      ),
      route: Type.Object({
        hops: Type.Integer({ minimum: 0 }),
        dexes: Type.Array(Type.String()),
        tokens: Type.Array(Type.String()),
        efficiencyScore: Type.Number(),
      }),
      priceImpact: Type.String(),
      usdValues: Type.Object({ inputValue: Type.Number(), outputValue: Type.Number(), netValue: Type.Number() }),
      slippageTolerance: Type.String(),
      expiryTimestamp: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      expiresIn: Type.Integer(),
      estimatedSwapTime: Type.Integer(),
      network: Type.Union(SOLANA_NETWORKS.map((n) => Type.Literal(n))),
      executable: Type.Boolean(),
      warnings: Type.Array(Type.String()),
      rawQuote: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  }),
);

import { Type } from '@sinclair/typebox';

/** The seed's swap quote as REST v1 answers it, for every chain family's quote paths (Solana's, the EVM's). */
export const QUOTE_FIELDS = `quoteId swapMode fromToken { address symbol decimals name logoUri } toToken { address symbol decimals name logoUri }
  amounts { inputAmount outputAmount minOutputAmount inputAmountRaw outputAmountRaw } rates { rate reverseRate usdRate }
  fees { protocolFeePercent protocolFeeAmount platformFeePercent totalFeePercent totalFeeAmount gasFee totalCost }
  route { hops dexes tokens efficiencyScore } priceImpact usdValues { inputValue outputValue netValue } slippageTolerance
  expiryTimestamp expiresIn estimatedSwapTime network executable warnings rawQuote`;
const Token = Type.Object({
  address: Type.String(),
  symbol: Type.String(),
  decimals: Type.Integer(),
  name: Type.String(),
  // The seed: "logoUri string (optional)": absent when the token has no logo, never null.
  logoUri: Type.Optional(Type.String()),
});
const Strings = (...names: string[]) => Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()])));
export const Quote = Type.Object(
  {
    quoteId: Type.String(),
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
      hops: Type.Integer(),
      dexes: Type.Array(Type.String()),
      tokens: Type.Array(Type.String()),
      efficiencyScore: Type.Integer({ minimum: 1, maximum: 100 }),
    }),
    priceImpact: Type.String({ description: 'Percent, absolute value.' }),
    usdValues: Type.Object({ inputValue: Type.Number(), outputValue: Type.Number(), netValue: Type.Number() }),
    slippageTolerance: Type.String({ description: 'Percent.' }),
    expiryTimestamp: Type.Integer({ description: 'Unix seconds.' }),
    expiresIn: Type.Integer(),
    estimatedSwapTime: Type.Integer(),
    network: Type.String(),
    executable: Type.Boolean(),
    warnings: Type.Array(Type.String()),
    rawQuote: Type.Optional(Type.Any({ description: "The routing provider's quote, verbatim." })),
  },
  { title: 'SwapQuote' },
);

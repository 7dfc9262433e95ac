import { Type } from '@sinclair/typebox';
import { SOL_MINT } from '../../domain/solana/native-token.js';
import { QUOTE_FIELDS, Quote } from './swap-quote-schema.js';
import { defineRoutes } from '../route.js';
import { Address, SolanaNetwork, TokenAmount } from './solana.js';

/**
 * REST v1 Solana exchange. The seed names token-to-sol and token-to-token quotes and
 * swap-token-to-sol (which swaps SOL into `outputMint`, as its title says); the SOL-to-token quote,
 * token-to-token and SOL-to-token swaps and swap-by-quote are named here after them (docs/rest-v1.md).
 */
const RESULT_FIELDS = 'signature txUrl status quoteId inputAmount outputAmount';

const Result = Type.Object(
  {
    signature: Type.String(),
    txUrl: Type.String({
      description:
        "Production: the public explorer link, with the cluster. Sandbox: the gateway's own path GET /api/v1/solana/transactions/{signature} (the sandbox chain is on no public explorer).",
    }),
    status: Type.String(),
    quoteId: Type.String(),
    inputAmount: Type.String(),
    outputAmount: Type.String(),
  },
  { title: 'SwapResult' },
);
const Slippage = Type.Integer({ minimum: 0, maximum: 5000, description: 'Basis points; default 50 (0.5 %).' });
const Mode = Type.Union([Type.Literal('ExactIn'), Type.Literal('ExactOut')], {
  description: 'ExactIn (default): amount goes in. ExactOut: amount comes out.',
});
const QueryAmount = Type.String({
  pattern: '^\\d+(\\.\\d+)?$',
  description: 'Human units of the input token (of the output token with ExactOut).',
});
const common = {
  slippageBps: Type.Optional(Slippage),
  swapMode: Type.Optional(Mode),
  network: Type.Optional(SolanaNetwork),
};
const asText = (value: unknown) => (typeof value === 'number' ? String(value) : value);

const quoteRoute = (
  operationId: string,
  path: string,
  summary: string,
  fixed: { inputMint?: string; outputMint?: string },
  query: Record<string, ReturnType<typeof Type.String>>,
) => ({
  method: 'GET' as const,
  path,
  operationId,
  tag: 'Solana exchange',
  summary,
  description:
    'A quote from the routing provider (the sandbox AMM; Jupiter in production), stored for 30 seconds: swap it by quoteId. Accepts an API key or a bearer token.',
  operation: `query SwapQuote($input: SwapQuoteInput!) { swapQuote(input: $input) { ${QUOTE_FIELDS} } }`,
  querystring: Type.Object({ ...query, amount: QueryAmount, ...common }),
  variables: ({ query: q }: { query: Record<string, unknown> }) => ({ input: { ...q, ...fixed } }),
  message: 'Quote retrieved successfully',
  response: Quote,
});

const swapRoute = (
  operationId: string,
  path: string,
  summary: string,
  description: string,
  body: Record<string, unknown>,
  fixed: { inputMint?: string } = {},
) => ({
  method: 'POST' as const,
  path,
  operationId,
  tag: 'Solana exchange',
  summary,
  description: `${description} Re-quotes first: a price beyond slippageBps is 409 PRICE_MOVED and nothing moves. Honours Idempotency-Key.`,
  operation: `mutation SwapTokens($input: SwapInput!) { swapTokens(input: $input) { ${RESULT_FIELDS} } }`,
  body: Type.Object(body as never),
  variables: ({ body: b }: { body: unknown }) => {
    const input = (b ?? {}) as Record<string, unknown>;
    return {
      input: { ...input, ...fixed, ...(input['amount'] !== undefined ? { amount: asText(input['amount']) } : {}) },
    };
  },
  message: 'Swap submitted successfully',
  response: Result,
});

export const solanaExchangeRoutes = defineRoutes([
  quoteRoute(
    'quoteTokenToSol',
    '/api/v1/solana-exchange/quote/token-to-sol',
    'Quote token to SOL',
    { outputMint: SOL_MINT },
    { inputMint: Address },
  ),
  quoteRoute(
    'quoteSolToToken',
    '/api/v1/solana-exchange/quote/sol-to-token',
    'Quote SOL to token',
    { inputMint: SOL_MINT },
    { outputMint: Address },
  ),
  quoteRoute(
    'quoteTokenToToken',
    '/api/v1/solana-exchange/quote/token-to-token',
    'Quote token to token',
    {},
    { inputMint: Address, outputMint: Address },
  ),
  swapRoute(
    'swapTokenToSol',
    '/api/v1/solana-exchange/swap-token-to-sol',
    'Swap SOL to an SPL token',
    'As the seed titles it: swaps `amount` SOL into `outputMint` (the path names the opposite direction and stays as given).',
    {
      outputMint: Address,
      amount: TokenAmount,
      slippageBps: Type.Optional(Slippage),
      network: Type.Optional(SolanaNetwork),
    },
    { inputMint: SOL_MINT },
  ),
  swapRoute(
    'swapSolToToken',
    '/api/v1/solana-exchange/swap-sol-to-token',
    'Swap SOL to an SPL token (second entry)',
    'Swaps `amount` SOL into `outputMint`.',
    {
      outputMint: Address,
      amount: TokenAmount,
      slippageBps: Type.Optional(Slippage),
      swapMode: Type.Optional(Mode),
      network: Type.Optional(SolanaNetwork),
    },
    { inputMint: SOL_MINT },
  ),
  swapRoute(
    'swapTokenToToken',
    '/api/v1/solana-exchange/swap-token-to-token',
    'Swap SPL token to SPL token',
    'Swaps `amount` of `inputMint` into `outputMint` (or, with ExactOut, buys `amount` of `outputMint`).',
    { inputMint: Address, outputMint: Address, amount: TokenAmount, ...common },
  ),
  swapRoute(
    'swapByQuote',
    '/api/v1/solana-exchange/swap',
    'Swap by quote',
    'Executes a stored quote: `quoteId` from any quote route. An expired quote is 400 QUOTE_EXPIRED.',
    { quoteId: Type.String({ minLength: 1, maxLength: 64 }) },
  ),
]);

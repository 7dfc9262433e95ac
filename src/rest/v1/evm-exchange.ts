import { Type } from '@sinclair/typebox';
import { EVM_NETWORKS } from '../../domain/evm/networks.js';
import { defineRoutes } from '../route.js';
import { EvmTransferFields, EvmTransferView } from './evm.js';
import { QUOTE_FIELDS, Quote } from './swap-quote-schema.js';

/**
 * REST v1 EVM exchange. The spec names the operations (quote and swap: native to ERC-20, ERC-20 to
 * ERC-20, ERC-20 to native) without paths; these are the gateway's own (docs/evm-exchange.md): one
 * quote path per direction, and one swap path executing a stored quote.
 */
const NetworkParams = Type.Object({
  network: Type.Union(
    EVM_NETWORKS.map((n) => Type.Literal(n)),
    { description: 'The EVM network.' },
  ),
});
const TokenRef = (role: string) =>
  Type.String({
    pattern: '^([A-Za-z]{2,10}|0x[0-9a-fA-F]{40})$',
    description: `The token ${role}: its symbol on the network (USDT, USDC, CNGN, WETH…, any case) or its contract.`,
  });
const common = {
  amount: Type.String({
    pattern: '^\\d+(\\.\\d+)?$',
    description: 'In units of what is sold (the native coin for native-to-token), a decimal string.',
  }),
  slippageBps: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 5000, description: 'Basis points; default 50 (0.5 %).' }),
  ),
};

const quoteRoute = (
  operationId: string,
  direction: 'NATIVE_TO_TOKEN' | 'TOKEN_TO_TOKEN' | 'TOKEN_TO_NATIVE',
  summary: string,
  tokens: Record<string, ReturnType<typeof TokenRef>>,
) => ({
  method: 'GET' as const,
  path: `/api/v1/evm-exchange/:network/quote/${direction.toLowerCase().replaceAll('_', '-')}`,
  operationId,
  tag: 'EVM exchange',
  summary,
  description:
    "A quote on the network's Uniswap V2 pools (sandbox: the gateway's own), the seed's swap quote fields, stored for 30 seconds: swap it by quoteId. EVM swaps are ExactIn. Production: 503.",
  operation: `query EvmSwapQuote($network: String!, $input: EvmSwapQuoteInput!) { evmSwapQuote(network: $network, input: $input) { ${QUOTE_FIELDS} } }`,
  params: NetworkParams,
  querystring: Type.Object({ ...tokens, ...common }),
  variables: ({ params, query }: { params: Record<string, unknown>; query: Record<string, unknown> }) => ({
    network: params['network'],
    input: { ...query, direction },
  }),
  message: 'Quote retrieved successfully',
  response: Quote,
});

export const evmExchangeRoutes = defineRoutes([
  quoteRoute('quoteEvmNativeToToken', 'NATIVE_TO_TOKEN', 'Quote native coin to ERC-20', {
    outputToken: TokenRef('bought'),
  }),
  quoteRoute('quoteEvmTokenToToken', 'TOKEN_TO_TOKEN', 'Quote ERC-20 to ERC-20', {
    inputToken: TokenRef('sold'),
    outputToken: TokenRef('bought'),
  }),
  quoteRoute('quoteEvmTokenToNative', 'TOKEN_TO_NATIVE', 'Quote ERC-20 to native coin', {
    inputToken: TokenRef('sold'),
  }),
  {
    method: 'POST',
    path: '/api/v1/evm-exchange/:network/swap',
    operationId: 'swapEvmTokens',
    tag: 'EVM exchange',
    summary: 'Swap by quote',
    description:
      "Executes a stored quote once, in any of the three directions. Priced again first: beyond the quote's slippage is 409 PRICE_MOVED, an expired quote 400 QUOTE_EXPIRED, a quote already executed 409 — each before anything is signed. Then, for a token sold, its approval of exactly the amount to Router02 (a reset to 0 first where the token needs it, as USDT on Ethereum), and the swap with amountOutMin enforced on chain; each transaction signed with the wallet's next nonce and its fee held, as sends are. Honours Idempotency-Key.",
    operation: `mutation SwapEvmTokens($network: String!, $input: EvmSwapInput!) { swapEvmTokens(network: $network, input: $input) { quoteId network status hash txUrl inputAmount outputAmount outputAmountRaw legs { ${EvmTransferFields} } } }`,
    params: NetworkParams,
    body: Type.Object({
      quoteId: Type.String({ description: 'A quote from one of the quote paths, on this network.' }),
    }),
    variables: ({ params, body }) => ({ network: params['network'], input: body }),
    message: 'Swap submitted successfully',
    response: Type.Object(
      {
        quoteId: Type.String(),
        network: Type.String(),
        status: Type.String({ description: "The router call's: pending, confirmed, failed or replaced." }),
        hash: Type.String({ description: "The router call's transaction hash." }),
        txUrl: Type.String(),
        inputAmount: Type.String(),
        outputAmount: Type.String({ description: 'What the pools paid once mined; the quote while pending.' }),
        outputAmountRaw: Type.String(),
        legs: Type.Array(EvmTransferView, { description: 'Approvals, then the swap, in nonce order.' }),
      },
      { title: 'EvmSwapResult' },
    ),
  },
]);

import { Type } from '@sinclair/typebox';
import { checkEvmAddress } from '../../domain/evm/evm-keys.js';
import { EVM_NETWORK_SPECS, EVM_NETWORKS } from '../../domain/evm/networks.js';
import { decimalText } from '../../domain/money/decimal.js';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

/**
 * REST v1 EVM wallet. The spec names the operations (supported networks, native and ERC-20
 * balances, the ERC-20 portfolio, native and token sends); these paths are the gateway's own
 * (docs/evm.md).
 */
const Network = Type.Union(
  EVM_NETWORKS.map((n) => Type.Literal(n)),
  { description: 'The EVM network. In sandbox each is a chain of the gateway’s own.' },
);
const TOKEN_SYMBOLS = [...new Set(Object.values(EVM_NETWORK_SPECS).flatMap((s) => s.tokens.map((t) => t.symbol)))];
const Token = Type.String({
  pattern: '^[A-Za-z]{2,10}$',
  description: `A supported token's symbol on the network (any case): ${TOKEN_SYMBOLS.join(', ')}.`,
});
const Amount = Type.Union([Type.String({ pattern: '^\\d+(\\.\\d+)?$' }), Type.Number({ exclusiveMinimum: 0 })], {
  description: "Token units: a decimal string (exact), or a number. At most the asset's decimals.",
  examples: ['1.5'],
});
const EvmAddress = Type.String({
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: 'A 0x EVM address (EIP-55 checksum when mixed-case).',
});
const asText = (value: unknown) => (typeof value === 'number' ? decimalText(value, 'amount') : value);

const BALANCE_FIELDS = 'network address symbol token decimals amount amountRaw';
const Balance = Type.Object(
  {
    network: Type.String(),
    address: Type.String(),
    symbol: Type.String(),
    token: Nullable(Type.String({ description: 'The ERC-20 contract; null for the native coin.' })),
    decimals: Type.Integer(),
    amount: Type.String({ description: 'Token units, a decimal string.' }),
    amountRaw: Type.String({ description: 'Raw base units (wei for the native coin), an integer string.' }),
  },
  { title: 'EvmBalance' },
);
const NETWORK_FIELDS =
  'id chainId name native { symbol name decimals } explorer dataFee tokens { address symbol name decimals wrapsNative }';
const NetworkView = Type.Object(
  {
    id: Type.String(),
    chainId: Type.Integer(),
    name: Type.String(),
    native: Type.Object({ symbol: Type.String(), name: Type.String(), decimals: Type.Integer() }),
    explorer: Type.String(),
    dataFee: Type.Boolean({ description: 'Whether a transaction also pays an L1 data fee.' }),
    tokens: Type.Array(
      Type.Object({
        address: Type.String({ description: 'The ERC-20 contract in this environment.' }),
        symbol: Type.String(),
        name: Type.String(),
        decimals: Type.Integer(),
        wrapsNative: Type.Boolean(),
      }),
    ),
  },
  { title: 'EvmNetwork' },
);
export const EvmTransferFields =
  'id hash status network chainId kind from to asset token amount amountRaw nonce maxFee maxFeeRaw replaces error txUrl createdAt';
export const EvmTransferView = Type.Object(
  {
    id: Type.String(),
    hash: Type.String(),
    status: Type.Union(
      [Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('failed'), Type.Literal('replaced')],
      { description: 'pending: sent, not mined yet (the final state arrives as a transaction.* event).' },
    ),
    network: Type.String(),
    chainId: Type.Integer(),
    kind: Type.String({ description: "native or token; a swap's legs: approve or swap." }),
    from: Type.String(),
    to: Type.String(),
    asset: Type.String({ description: 'The native coin’s symbol, or the token’s.' }),
    token: Nullable(Type.String()),
    amount: Type.String(),
    amountRaw: Type.String(),
    nonce: Type.String(),
    maxFee: Type.String({ description: 'The most it can cost in native coin: held while pending.' }),
    maxFeeRaw: Type.String(),
    replaces: Nullable(Type.String()),
    error: Nullable(Type.String()),
    txUrl: Type.String(),
    createdAt: DateTimeString,
  },
  { title: 'EvmTransfer' },
);
const NetworkParams = Type.Object({ network: Network });
const SendBody = Type.Object({ to: EvmAddress, amount: Amount });
const sendFieldChecks = (body: { to?: unknown }) => ({ to: () => checkEvmAddress(body.to, 'to') });
const sendVariables = ({ params, body }: { params: Record<string, unknown>; body: unknown }) => {
  const { to, amount } = body as { to: string; amount: unknown };
  return { ...params, input: { to, amount: asText(amount) } };
};
const SENDS =
  'Signs an EIP-1559 transaction with the next nonce of the wallet on the network, stores it, then sends it; waits a few seconds to be mined and answers either way (the final state arrives as a transaction.* event). The amount and the gas at its maximum (gas limit × fee cap, plus the L1 data fee on base, optimism, lisk and scroll) are held until it ends. Honours Idempotency-Key: a repeat returns the stored transfer and never signs twice. Too little balance: 400 INSUFFICIENT_FUNDS naming what is spendable.';

export const evmRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/evm/address',
    tag: 'EVM wallet',
    summary: "The user's EVM address",
    description: 'The custodial EVM wallet of the caller, created on first use: one address on every EVM network.',
    operation: 'query EvmWallet { evmWallet { address } }',
    message: 'Wallet address retrieved successfully',
    response: Type.Object({ address: Type.String({ description: 'Checksummed 0x address.' }) }, { title: 'EvmWallet' }),
  },
  {
    method: 'GET',
    path: '/api/v1/evm/networks',
    tag: 'EVM wallet',
    summary: 'Supported networks',
    description:
      'Every EVM network with its chain id, native coin, explorer and supported tokens (with their contracts in this environment). Production: 503 naming the JSON-RPC setting a network needs.',
    operation: `query EvmNetworks { evmNetworks { ${NETWORK_FIELDS} } }`,
    message: 'Networks retrieved successfully',
    response: Type.Array(NetworkView),
  },
  {
    method: 'GET',
    path: '/api/v1/evm/:network/balance',
    tag: 'EVM wallet',
    summary: 'Native balance',
    operation: `query EvmBalance($network: String!) { evmBalance(network: $network) { ${BALANCE_FIELDS} } }`,
    params: NetworkParams,
    message: 'Balance retrieved successfully',
    response: Balance,
  },
  {
    method: 'GET',
    path: '/api/v1/evm/:network/tokens/:token/balance',
    tag: 'EVM wallet',
    summary: 'ERC-20 balance',
    description: 'One supported token of the wallet on the network, by symbol; zero when it holds none.',
    operation: `query EvmTokenBalance($network: String!, $token: String!) { evmTokenBalance(network: $network, token: $token) { ${BALANCE_FIELDS} } }`,
    params: Type.Object({ network: Network, token: Token }),
    message: 'Token balance retrieved successfully',
    response: Balance,
  },
  {
    method: 'GET',
    path: '/api/v1/evm/:network/portfolio',
    tag: 'EVM wallet',
    summary: 'ERC-20 portfolio',
    description: 'The native coin and every token the network supports, held or not, in token units and raw.',
    operation: `query EvmPortfolio($network: String!) { evmPortfolio(network: $network) { address network chainId native { ${BALANCE_FIELDS} } tokens { ${BALANCE_FIELDS} } } }`,
    params: NetworkParams,
    message: 'Portfolio retrieved successfully',
    response: Type.Object(
      {
        address: Type.String(),
        network: Type.String(),
        chainId: Type.Integer(),
        native: Balance,
        tokens: Type.Array(Balance),
      },
      { title: 'EvmPortfolio' },
    ),
  },
  {
    method: 'POST',
    path: '/api/v1/evm/:network/send-native',
    tag: 'EVM wallet',
    summary: 'Send the native coin',
    description: SENDS,
    operation: `mutation SendEvmNative($network: String!, $input: EvmSendInput!) { sendEvmNative(network: $network, input: $input) { ${EvmTransferFields} } }`,
    params: NetworkParams,
    body: SendBody,
    fieldChecks: sendFieldChecks,
    variables: sendVariables,
    message: 'Transfer sent successfully',
    response: EvmTransferView,
  },
  {
    method: 'POST',
    path: '/api/v1/evm/:network/send-token',
    tag: 'EVM wallet',
    summary: 'Send an ERC-20 token',
    description: `${SENDS} The gas is paid in the native coin: a wallet without enough is refused with the gas needed named.`,
    operation: `mutation SendEvmToken($network: String!, $token: String!, $input: EvmSendInput!) { sendEvmToken(network: $network, token: $token, input: $input) { ${EvmTransferFields} } }`,
    params: NetworkParams,
    body: Type.Object({ token: Token, to: EvmAddress, amount: Amount }),
    fieldChecks: sendFieldChecks,
    variables: ({ params, body }) => ({
      ...sendVariables({ params, body }),
      token: (body as { token: string }).token,
    }),
    message: 'Transfer sent successfully',
    response: EvmTransferView,
  },
  {
    method: 'POST',
    path: '/api/v1/evm/:network/sandbox/faucet',
    tag: 'EVM wallet',
    summary: 'Sandbox faucet',
    description:
      "Sandbox only: the native coin and tokens for the caller's wallet on the network, sent by real transactions and mined before the answer. Without `asset`: 1 of the native coin, and 1,000 USDC, 1,000 USDT and 1,000,000 cNGN where the network has them. Honours Idempotency-Key. Production keys: 404.",
    operation:
      'mutation SandboxEvmFaucet($network: String!, $input: EvmFaucetInput) { sandboxEvmFaucet(network: $network, input: $input) { address network funded { symbol amount hash } } }',
    params: NetworkParams,
    body: Type.Object({
      asset: Type.Optional(
        Type.String({ pattern: '^[A-Za-z]{2,10}$', description: 'ETH, POL, BNB or a token symbol.' }),
      ),
      amount: Type.Optional(Amount),
    }),
    variables: ({ params, body }) => {
      const input = (body ?? {}) as { amount?: unknown };
      return {
        ...params,
        input: { ...input, ...(input.amount !== undefined ? { amount: asText(input.amount) } : {}) },
      };
    },
    message: 'Wallet funded successfully',
    response: Type.Object(
      {
        address: Type.String(),
        network: Type.String(),
        funded: Type.Array(Type.Object({ symbol: Type.String(), amount: Type.String(), hash: Type.String() })),
      },
      { title: 'EvmFaucetResult' },
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/evm/transactions',
    tag: 'EVM wallet',
    summary: 'Outgoing EVM transactions',
    description: "The wallet's sends on every EVM network, newest first.",
    operation: `query EvmTransfers($first: Int) { evmTransfers(first: $first) { ${EvmTransferFields} } }`,
    querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }),
    variables: ({ query }) => ({ first: (query as { limit?: number }).limit }),
    message: 'Transactions retrieved successfully',
    response: Type.Array(EvmTransferView),
  },
  {
    method: 'GET',
    path: '/api/v1/evm/:network/transactions/:hash',
    tag: 'EVM wallet',
    summary: 'An outgoing transaction by hash',
    operation: `query EvmTransfer($hash: String!) { evmTransfer(hash: $hash) { ${EvmTransferFields} } }`,
    params: Type.Object({ network: Network, hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) }),
    variables: ({ params }) => ({ hash: (params as { hash: string }).hash }),
    message: 'Transaction retrieved successfully',
    response: EvmTransferView,
  },
]);

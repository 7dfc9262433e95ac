import { Type } from '@sinclair/typebox';
import { SOLANA_NETWORKS } from '../../domain/solana/networks.js';
import { solTransferFieldChecks, tokenTransferFieldChecks } from '../../domain/solana/transfer-service.js';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';
import { WalletBalance } from './wallet.js';

/**
 * REST v1 Solana wallet. The seed names the address and transfer-token paths; balances, portfolio,
 * transfer SOL, transaction lookups and the sandbox faucet are named here after them (docs/rest-v1.md).
 */
export const SolanaNetwork = Type.Union(
  SOLANA_NETWORKS.map((n) => Type.Literal(n)),
  { description: 'The cluster; default mainnet-beta. In sandbox each is its own chain.' },
);
export const TokenAmount = Type.Union(
  [Type.String({ pattern: '^\\d+(\\.\\d+)?$' }), Type.Number({ exclusiveMinimum: 0 })],
  {
    description: "Token units: a decimal string (exact), or a number. At most the mint's decimals.",
    examples: ['1.5'],
  },
);
export const Address = Type.String({ minLength: 32, maxLength: 44, description: 'A base58 Solana address.' });
const asText = (value: unknown) => (typeof value === 'number' ? String(value) : value);

const BALANCE_FIELDS = 'mint symbol name decimals amount amountRaw usdValue';
const TokenBalance = Type.Object(
  {
    mint: Type.String(),
    symbol: Type.String(),
    name: Type.String(),
    decimals: Type.Integer(),
    amount: Type.String({ description: 'Token units.' }),
    amountRaw: Type.String({ description: 'Raw base units (lamports for SOL).' }),
    usdValue: Nullable(Type.Number()),
  },
  { title: 'SolanaTokenBalance' },
);
const Portfolio = Type.Object(
  {
    address: Type.String(),
    network: Type.String(),
    sol: TokenBalance,
    tokens: Type.Array(TokenBalance),
    totalUsdValue: Type.Number(),
  },
  { title: 'SolanaPortfolio' },
);
const PORTFOLIO_FIELDS = `address network sol { ${BALANCE_FIELDS} } tokens { ${BALANCE_FIELDS} } totalUsdValue`;

export const TRANSFER_FIELDS = 'id signature status network kind from to mint amount amountRaw error txUrl createdAt';
const Transfer = Type.Object(
  {
    signature: Type.String(),
    id: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('failed')], {
      description: 'pending: sent, not confirmed yet (the final state arrives as an event).',
    }),
    network: Type.String(),
    kind: Type.String(),
    from: Type.String(),
    to: Type.String(),
    mint: Type.String(),
    amount: Type.String(),
    amountRaw: Type.String(),
    error: Nullable(Type.String()),
    txUrl: Type.String(),
    createdAt: DateTimeString,
  },
  { title: 'SolanaTransfer' },
);
const NetworkQuery = Type.Object({ network: Type.Optional(SolanaNetwork) });

export const solanaRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/solana/address',
    tag: 'Solana wallet',
    summary: "The user's wallet address",
    description:
      "The custodial wallet of the caller's user and environment, created on first use. A Solana address is the same on every cluster, so there is no network parameter.",
    operation: 'query SolanaWallet { solanaWallet { address } }',
    message: 'Wallet address retrieved successfully',
    response: Type.Object({ address: Type.String({ description: 'Base58 public key.' }) }, { title: 'SolanaWallet' }),
  },
  {
    method: 'GET',
    path: '/api/v1/solana/balance',
    tag: 'Solana wallet',
    summary: 'SOL balance',
    operation: `query SolanaBalance($network: String) { solanaBalance(network: $network) { ${BALANCE_FIELDS} } }`,
    querystring: NetworkQuery,
    message: 'SOL balance retrieved successfully',
    response: TokenBalance,
  },
  {
    method: 'GET',
    path: '/api/v1/solana/token-balance',
    tag: 'Solana wallet',
    summary: 'Token balance',
    description: 'One token of the wallet; zero when it has no account for that mint.',
    operation: `query SolanaTokenBalance($mint: String!, $network: String) { solanaTokenBalance(mint: $mint, network: $network) { ${BALANCE_FIELDS} } }`,
    querystring: Type.Object({ mint: Address, network: Type.Optional(SolanaNetwork) }),
    message: 'Token balance retrieved successfully',
    response: TokenBalance,
  },
  {
    method: 'GET',
    path: '/api/v1/solana/portfolio',
    tag: 'Solana wallet',
    summary: 'Complete portfolio',
    description: 'SOL and every token account, with USD values where a price is known.',
    operation: `query SolanaPortfolio($network: String) { solanaPortfolio(network: $network) { ${PORTFOLIO_FIELDS} } }`,
    querystring: NetworkQuery,
    message: 'Portfolio retrieved successfully',
    response: Portfolio,
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/portfolio',
    tag: 'Wallet account',
    summary: 'Wallet and crypto portfolio',
    description: 'The NGN wallet beside the Solana portfolio of one network.',
    operation: `query WalletPortfolio($network: String) { walletPortfolio(network: $network) { ngn { currency available availableKobo held heldKobo total totalKobo } solana { ${PORTFOLIO_FIELDS} } } }`,
    querystring: NetworkQuery,
    message: 'Portfolio retrieved successfully',
    response: Type.Object({ ngn: WalletBalance, solana: Portfolio }, { title: 'WalletPortfolio' }),
  },
  {
    method: 'POST',
    path: '/api/v1/solana/transfer-token',
    tag: 'Solana wallet',
    summary: 'Transfer an SPL token',
    description:
      "A TransferChecked from the caller's wallet; the recipient's token account is created when missing (the sender pays its rent and the network fee). Waits a few seconds for confirmation and answers with the signature either way; the final state arrives as a transaction.* event. Honours Idempotency-Key: a repeat returns the stored signature and never signs twice. Too little balance: 400 with errorCode INSUFFICIENT_FUNDS.",
    operation: `mutation TransferSolanaToken($input: SolanaTokenTransferInput!) { transferSolanaToken(input: $input) { ${TRANSFER_FIELDS} } }`,
    body: Type.Object({
      to: Address,
      tokenMintAddress: Address,
      amount: TokenAmount,
      network: Type.Optional(SolanaNetwork),
    }),
    fieldChecks: tokenTransferFieldChecks,
    variables: ({ body }) => ({ input: { ...(body as object), amount: asText((body as { amount: unknown }).amount) } }),
    message: 'Token transferred successfully',
    response: Transfer,
  },
  {
    method: 'POST',
    path: '/api/v1/solana/transfer-sol',
    tag: 'Solana wallet',
    summary: 'Transfer SOL',
    description:
      "Sends SOL from the caller's wallet (the network fee on top). Same confirmation, idempotency and errors as transfer-token.",
    operation: `mutation TransferSol($input: SolTransferInput!) { transferSol(input: $input) { ${TRANSFER_FIELDS} } }`,
    body: Type.Object({ to: Address, amount: TokenAmount, network: Type.Optional(SolanaNetwork) }),
    fieldChecks: solTransferFieldChecks,
    variables: ({ body }) => ({ input: { ...(body as object), amount: asText((body as { amount: unknown }).amount) } }),
    message: 'SOL transferred successfully',
    response: Transfer,
  },
  {
    method: 'GET',
    path: '/api/v1/solana/transactions',
    tag: 'Solana wallet',
    summary: 'Outgoing transactions',
    description: "The wallet's transfers and swaps, newest first.",
    operation: `query SolanaTransfers($first: Int) { solanaTransfers(first: $first) { ${TRANSFER_FIELDS} } }`,
    querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }),
    variables: ({ query }) => ({ first: (query as { limit?: number }).limit }),
    message: 'Transactions retrieved successfully',
    response: Type.Array(Transfer),
  },
  {
    method: 'GET',
    path: '/api/v1/solana/transactions/:signature',
    tag: 'Solana wallet',
    summary: 'An outgoing transaction by signature',
    operation: `query SolanaTransfer($signature: String!) { solanaTransfer(signature: $signature) { ${TRANSFER_FIELDS} } }`,
    params: Type.Object({ signature: Type.String({ minLength: 32, maxLength: 100 }) }),
    message: 'Transaction retrieved successfully',
    response: Transfer,
  },
  {
    method: 'POST',
    path: '/api/v1/solana/sandbox/faucet',
    tag: 'Solana wallet',
    summary: 'Sandbox faucet',
    description:
      "Sandbox only: SOL and sandbox tokens for the caller's wallet. Without `asset`: 2 SOL, 1,000 USDC, 1,000 USDT and 10,000,000 BONK. On `network` (default mainnet-beta), which the answer names: each network is its own chain.",
    operation:
      'mutation SandboxSolanaFaucet($input: FaucetInput) { sandboxSolanaFaucet(input: $input) { address network funded { symbol amount } } }',
    body: Type.Object({
      network: Type.Optional(SolanaNetwork),
      asset: Type.Optional(Type.String({ maxLength: 44 })),
      amount: Type.Optional(TokenAmount),
    }),
    variables: ({ body }) => {
      const input = (body ?? {}) as { amount?: unknown };
      return { input: { ...input, ...(input.amount !== undefined ? { amount: asText(input.amount) } : {}) } };
    },
    message: 'Wallet funded',
    response: Type.Object(
      {
        address: Type.String(),
        network: Type.String({ description: 'The network funded; each is its own sandbox chain.' }),
        funded: Type.Array(Type.Object({ symbol: Type.String(), amount: Type.String() })),
      },
      { title: 'SolanaFaucetGrant' },
    ),
  },
]);

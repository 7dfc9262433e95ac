import { Type } from '@sinclair/typebox';
import { FIAT_CURRENCIES, OFFRAMP_NETWORKS, OFFRAMP_STATUSES, OFFRAMP_TOKENS } from '../../domain/offramp/catalogue.js';
import { orderFieldChecks, verifyAccountFieldChecks } from '../../domain/offramp/offramp-service.js';
import { defineRoutes } from '../route.js';
import { DateFilter, DateTimeString, Nullable, PageOf, PageQuery, pageAndFilter } from '../schemas.js';

/**
 * REST v1 offramp. The seed names the assets and quote paths; the rest (orders, payout banks,
 * account verification, history, tracking and the sandbox deposit) are named here after them and
 * listed in docs/rest-v1.md. Networks are spelled as the seed spells them (`arbitrum-one`); GraphQL
 * spells them with "_", so variables and results are translated at this edge.
 */
const Token = Type.Union(
  OFFRAMP_TOKENS.map((t) => Type.Literal(t)),
  { description: 'The token to sell.' },
);
const Network = Type.Union(
  OFFRAMP_NETWORKS.map((n) => Type.Literal(n)),
  { description: 'The network the token is on.' },
);
const Fiat = Type.Union(
  FIAT_CURRENCIES.map((f) => Type.Literal(f)),
  { description: 'The currency paid out.' },
);
const Status = Type.Union(OFFRAMP_STATUSES.map((s) => Type.Literal(s)));
const DecimalAmount = Type.String({
  pattern: '^\\d+(\\.\\d+)?$',
  description: 'A decimal number of token units, e.g. 25.5.',
  examples: ['25.5'],
});

const toGraphQLNetwork = (network: unknown) => (typeof network === 'string' ? network.replace(/-/g, '_') : network);
const toRestNetwork = (network: unknown) => (typeof network === 'string' ? network.replace(/_/g, '-') : network);
const withRestNetwork = <T extends { network: unknown }>(value: T): T => ({
  ...value,
  network: toRestNetwork(value.network),
});

/**
 * An order as REST shows it: fiat money and the rate as numbers, like the quote's `rate` (token
 * amounts stay decimal strings). GraphQL keeps them as exact decimal text.
 */
const restOrder = (order: unknown) => {
  const value = withRestNetwork(order as { network: unknown; rate: string; fiatAmount: string });
  return { ...value, rate: Number(value.rate), fiatAmount: Number(value.fiatAmount) };
};

const ORDER_FIELDS = `id reference status token network amount senderFee transactionFee amountToSend rate fiat fiatAmount receiveAddress validUntil
  recipient { institution bankName accountNumber accountName memo } refundAddress failureReason txHash version createdAt updatedAt`;

const OrderSchema = Type.Object(
  {
    id: Type.String(),
    reference: Type.String(),
    status: Status,
    token: Token,
    network: Network,
    amount: Type.String({ description: 'Token units sold.' }),
    senderFee: Type.String(),
    transactionFee: Type.String(),
    amountToSend: Type.String({
      description: 'amount + senderFee + transactionFee: pay exactly this into receiveAddress.',
    }),
    rate: Type.Number({ description: 'Fiat per token, locked at creation.' }),
    fiat: Fiat,
    fiatAmount: Type.Number({ description: 'What the recipient receives, in the fiat currency (two decimals).' }),
    receiveAddress: Type.String(),
    validUntil: DateTimeString,
    recipient: Type.Object({
      institution: Type.String(),
      bankName: Type.String(),
      accountNumber: Type.String(),
      accountName: Type.String(),
      memo: Nullable(Type.String()),
    }),
    refundAddress: Nullable(Type.String()),
    failureReason: Nullable(Type.String()),
    txHash: Nullable(Type.String()),
    version: Type.Integer({ description: 'Increases with every change.' }),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'OfframpOrder' },
);

const AssetSchema = Type.Object(
  { token: Token, network: Network, contractAddress: Type.String(), decimals: Type.Integer() },
  { title: 'OfframpAsset' },
);
const InstitutionSchema = Type.Object(
  { code: Type.String(), name: Type.String(), type: Type.String({ examples: ['bank', 'mobile_money'] }) },
  { title: 'PayoutInstitution' },
);
const ReferenceParam = Type.Object({ reference: Type.String({ minLength: 1, maxLength: 64 }) });

export const offrampRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/offramp/exchange/assets',
    tag: 'Offramp',
    summary: 'List supported assets',
    description: 'The token and network pairs the offramp accepts, with contract address and decimals.',
    operation: 'query OfframpAssets { offrampAssets { token network contractAddress decimals } }',
    result: (data) => (data['offrampAssets'] as Array<{ network: unknown }>).map(withRestNetwork),
    message: 'Offramp assets retrieved successfully',
    response: Type.Array(AssetSchema),
  },
  {
    method: 'GET',
    path: '/api/v1/offramp/exchange/quote',
    tag: 'Offramp',
    summary: 'Get a rate quote',
    description:
      'A live rate for selling `amount` of `token` on `network` for `fiat`. The body is the quote itself, not wrapped in the envelope.',
    operation: `query OfframpQuote($token: OfframpToken!, $network: OfframpNetwork!, $amount: String!, $fiat: FiatCurrency!) {
      offrampQuote(token: $token, network: $network, amount: $amount, fiat: $fiat) { token amount network fiat rate } }`,
    querystring: Type.Object({ token: Token, network: Network, amount: DecimalAmount, fiat: Fiat }),
    variables: ({ query }) => ({ ...query, network: toGraphQLNetwork(query.network) }),
    result: (data) => withRestNetwork(data['offrampQuote'] as { network: unknown }),
    envelope: false,
    message: 'Quote retrieved successfully',
    response: Type.Object(
      {
        token: Token,
        amount: Type.Number(),
        network: Network,
        fiat: Fiat,
        rate: Type.Number({ description: 'Fiat units per token.' }),
      },
      { title: 'OfframpQuote' },
    ),
  },
  {
    method: 'POST',
    path: '/api/v1/offramp/exchange/orders',
    tag: 'Offramp',
    summary: 'Initiate a crypto-to-fiat order',
    description:
      'Locks the rate and returns the deposit address: pay exactly `amountToSend` of the token into `receiveAddress` before `validUntil`, from your own wallet. Honours `Idempotency-Key`: a retry with the same key and body returns the same order; the same key with another body is 422; a `reference` already used is 409.',
    operation: `mutation InitiateOfframpOrder($input: InitiateOfframpOrderInput!) { initiateOfframpOrder(input: $input) { ${ORDER_FIELDS} } }`,
    body: Type.Object({
      token: Token,
      network: Network,
      amount: Type.Union([DecimalAmount, Type.Number({ exclusiveMinimum: 0 })], {
        description: 'Token units: a decimal string (exact) or a number.',
      }),
      fiat: Fiat,
      recipient: Type.Object({
        institution: Type.String({
          minLength: 1,
          maxLength: 32,
          description: 'A code from the supported payout banks.',
        }),
        accountNumber: Type.String({ minLength: 1, maxLength: 34 }),
        accountName: Type.String({ minLength: 1, maxLength: 100 }),
        memo: Type.Optional(Type.String({ maxLength: 140 })),
      }),
      reference: Type.String({ minLength: 1, maxLength: 64 }),
      refundAddress: Type.Optional(
        Type.String({ maxLength: 66, description: 'Where a deposit is returned if the payout cannot be made.' }),
      ),
    }),
    fieldChecks: orderFieldChecks,
    variables: ({ body }) => {
      const input = body as { network: string; amount: string | number };
      return { input: { ...input, network: toGraphQLNetwork(input.network), amount: String(input.amount) } };
    },
    result: (data) => restOrder(data['initiateOfframpOrder']),
    message: 'Offramp order created successfully',
    response: OrderSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/offramp/payouts/banks',
    tag: 'Offramp',
    summary: 'List supported payout banks',
    operation: 'query OfframpPayoutBanks($fiat: FiatCurrency!) { offrampPayoutBanks(fiat: $fiat) { code name type } }',
    querystring: Type.Object({ fiat: Fiat }),
    message: 'Payout banks retrieved successfully',
    response: Type.Array(InstitutionSchema),
  },
  {
    method: 'POST',
    path: '/api/v1/offramp/payouts/verify-account',
    tag: 'Offramp',
    summary: 'Verify a payout bank account',
    operation:
      'mutation VerifyOfframpBankAccount($input: VerifyBankAccountInput!) { verifyOfframpBankAccount(input: $input) { institution accountNumber accountName } }',
    body: Type.Object({
      institution: Type.String({ minLength: 1, maxLength: 32 }),
      accountNumber: Type.String({ minLength: 1, maxLength: 34 }),
    }),
    fieldChecks: verifyAccountFieldChecks,
    variables: ({ body }) => ({ input: body }),
    status: 200,
    message: 'Bank account verified successfully',
    response: Type.Object(
      { institution: Type.String(), accountNumber: Type.String(), accountName: Nullable(Type.String()) },
      { title: 'VerifiedBankAccount' },
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/offramp/ledger/transactions',
    tag: 'Offramp',
    summary: 'Offramp transaction history',
    description: "The caller's orders, newest first, paginated and filterable.",
    operation: `query OfframpOrders($filter: OfframpOrderFilter, $page: Int, $limit: Int) {
      offrampOrders(filter: $filter, page: $page, limit: $limit) { orders { ${ORDER_FIELDS} } page limit total totalPages hasNext hasPrev } }`,
    querystring: Type.Object({
      status: Type.Optional(Status),
      token: Type.Optional(Token),
      network: Type.Optional(Network),
      fiat: Type.Optional(Fiat),
      from: Type.Optional(DateFilter('Created at or after (a date: from its start).')),
      to: Type.Optional(DateFilter('Created before a date-time, or on or before a date (inclusive).')),
      ...PageQuery(100),
    }),
    variables: ({ query }) =>
      pageAndFilter({ query: { ...query, ...(query.network ? { network: toGraphQLNetwork(query.network) } : {}) } }),
    result: (data) => {
      const page = data['offrampOrders'] as { orders: Array<{ network: unknown }> };
      return { ...page, orders: page.orders.map(restOrder) };
    },
    message: 'Offramp transactions retrieved successfully',
    response: PageOf('orders', OrderSchema, 'OfframpOrderPage'),
  },
  {
    method: 'GET',
    path: '/api/v1/offramp/ledger/transactions/:reference',
    tag: 'Offramp',
    summary: 'Track an offramp transaction by reference',
    operation: `query OfframpOrder($reference: String!) { offrampOrder(reference: $reference) { ${ORDER_FIELDS} } }`,
    params: ReferenceParam,
    result: (data) => restOrder(data['offrampOrder']),
    message: 'Offramp transaction retrieved successfully',
    response: OrderSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/offramp/sandbox/orders/:reference/deposit',
    tag: 'Offramp',
    summary: 'Simulate the deposit (sandbox only)',
    description:
      "The sender's payment arrives; the order then walks deposit_received → processing → fiat_sent → completed, one step every 5 seconds, emitting each event.",
    operation: `mutation SimulateOfframpDeposit($reference: String!) { simulateOfframpDeposit(reference: $reference) { ${ORDER_FIELDS} } }`,
    params: ReferenceParam,
    result: (data) => restOrder(data['simulateOfframpDeposit']),
    status: 200,
    message: 'Deposit simulated successfully',
    response: OrderSchema,
  },
]);

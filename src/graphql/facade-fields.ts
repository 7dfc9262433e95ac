import type { RouteSetting } from '../domain/facade/upstream-routes.js';
import type { FacadeSurface } from './facade-schema.js';

/** The EVM wallet's reads and sends (the spec names them; the route map places them, upstream-routes.ts). */
const EVM_READS = ['evmWallet', 'evmNetworks', 'evmBalance', 'evmTokenBalance', 'evmPortfolio'] as const;
const EVM_SENDS = ['sendEvmNative', 'sendEvmToken'] as const;

/**
 * The EVM types as this gateway's REST answers them (docs/evm.md), every field: listed so that a
 * field added to one later is not served until the facade asks its upstream for it. Reached only
 * through the EVM operations, so served only where the route map places those.
 */
const EVM_TYPES: Readonly<Record<string, readonly string[]>> = {
  EvmWallet: ['address'],
  EvmNetwork: ['id', 'chainId', 'name', 'native', 'explorer', 'dataFee', 'tokens'],
  EvmNativeCoin: ['symbol', 'name', 'decimals'],
  EvmBalance: ['network', 'address', 'symbol', 'token', 'decimals', 'amount', 'amountRaw'],
  EvmPortfolio: ['address', 'network', 'chainId', 'native', 'tokens'],
  EvmTransfer: [
    'id',
    'nodeId',
    'hash',
    'status',
    'network',
    'chainId',
    'kind',
    'from',
    'to',
    'asset',
    'token',
    'amount',
    'amountRaw',
    'nonce',
    'maxFee',
    'maxFeeRaw',
    'replaces',
    'error',
    'txUrl',
    'createdAt',
  ],
};

/**
 * What the graph serves in facade mode, by type: every other root field, and every other field of
 * a type listed here, is left out of the schema a facade serves (facade-schema.ts), so nothing is
 * read from the facade's own database, which holds none of the upstream's users, keys or money.
 * Types not listed keep all their fields. docs/facade.md lists the same fields.
 */
export const FACADE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Query: [
    'apiInfo',
    'me',
    '_service',
    'billRecords',
    'billRecord',
    'offrampAssets',
    'offrampQuote',
    'solanaWallet',
    'swapQuote',
    ...EVM_READS,
    // The facade's own records: the events its upstream delivered (inbound-webhooks.ts) and the
    // endpoints it re-delivers them to.
    'events',
    'upstreamWebhookReceiver',
    'webhookEndpoints',
    'webhookEndpoint',
  ],
  Mutation: [
    'validateBillCustomer',
    'buyAirtime',
    'payElectricity',
    'buyMobileData',
    'subscribeCableTv',
    'depositWithPaymentMethod',
    'transferSolanaToken',
    'swapTokens',
    ...EVM_SENDS,
    'createBusinessCustomer',
    'registerUpstreamWebhookSecret',
    'createWebhookEndpoint',
    'updateWebhookEndpoint',
    'deleteWebhookEndpoint',
    'rotateWebhookSecret',
    'sendTestWebhook',
    'resendWebhookDelivery',
  ],
  Subscription: ['events'],
  // An endpoint's delivery log names each event by the id its partner knows (the upstream's).
  WebhookEndpoint: [
    'deliveries',
    'id',
    'url',
    'description',
    'eventTypes',
    'enabled',
    'disabledReason',
    'secretRotationEndsAt',
    'createdAt',
    'updatedAt',
  ],
  // The user record as `GET /api/v1/user/me` gives it; its relationships (businesses, wallet,
  // transactions, …) are not asked of the upstream yet.
  User: [
    'id',
    'nodeId',
    'createdAt',
    'updatedAt',
    'deletedDate',
    'email',
    'phone',
    'firstName',
    'lastName',
    'name',
    'haveTransactionPin',
    'verified',
    'resetToken',
    'resetTokenExpiry',
    'dob',
    'isAdmin',
    'deviceId',
    'deviceIp',
    'deviceModel',
    'platform',
    'lastLoggedIn',
  ],
  // The spec's deposit result: no id (so no nodeId and no Node), method, failureReason, version,
  // timestamps or relationships.
  Deposit: [
    'amount',
    'amountKobo',
    'reference',
    'currency',
    'customization',
    'customer',
    'accountNumber',
    'bankName',
    'accountName',
    'expiry_datetime',
    'note',
    'status',
    'redirectUrl',
    'narration',
    'nextAction',
  ],
  // The address `GET /api/v1/solana/address` gives; the wallet's balances and portfolio are not asked of the upstream.
  SolanaWallet: ['address'],
  // The customer as this gateway's REST answers it (the spec shows no body): not its business.
  BusinessCustomer: [
    'id',
    'nodeId',
    'businessId',
    'name',
    'phone',
    'email',
    'externalRef',
    'status',
    'createdAt',
    'updatedAt',
  ],
  // The spec's token transfer answer is the signature alone.
  SolanaTransfer: ['signature'],
  // The spec's swap execution result: this gateway's status, quote id and amounts are not in it.
  SwapResult: ['signature', 'txUrl'],
  ...EVM_TYPES,
  // A token of a network's list; also what a swap quote's ChainToken may be, so served with every route map.
  EvmToken: ['address', 'symbol', 'name', 'decimals', 'logoUri', 'wrapsNative'],
  // The spec's bill transaction record: this gateway's fee, customerName, failureReason, version
  // and wallet transaction are not in it.
  BillRecord: [
    'id',
    'nodeId',
    'createdAt',
    'updatedAt',
    'deletedDate',
    'userId',
    'reference',
    'billerCode',
    'itemCode',
    'customer',
    'amount',
    'type',
    'status',
    'providerData',
    'txRef',
    'billerName',
    'validityPeriod',
    'metadata',
    'token',
    'units',
  ],
};

/**
 * Input fields a facade takes, where the spec's request has fewer than the graph's input: the
 * spec's airtime and electricity bodies carry no `reference`, and electricity no `scheduleData`;
 * its token-to-token quote takes no swap mode, slippage or network, and its swap no quote id,
 * mode or network.
 */
export const FACADE_INPUT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  AirtimeInput: ['phoneNumber', 'biller', 'amount', 'isSchedule', 'scheduleData', 'saveBeneficiary', 'beneficiaryName'],
  ElectricityInput: ['meterNumber', 'disco', 'amount', 'isSchedule', 'saveBeneficiary', 'beneficiaryName'],
  // The token-to-token quote's three query parameters: the spec gives no mode, slippage or network.
  SwapQuoteInput: ['inputMint', 'outputMint', 'amount'],
  // The spec's swap body (`swap-token-to-sol`, SOL into outputMint): no quote id, mode or network;
  // inputMint stays, and must be SOL's, so a document means the same in both modes.
  SwapInput: ['inputMint', 'outputMint', 'amount', 'slippageBps'],
};

/** Fields of the operations the spec only names: served only where the route map places them (UPSTREAM_ROUTES). */
export const NAMED_ONLY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Query: [...EVM_READS],
  Mutation: ['buyMobileData', 'subscribeCableTv', ...EVM_SENDS],
  ...EVM_TYPES,
};

/** What a facade serves with this route map. */
export function facadeSurface(routes: RouteSetting): FacadeSurface {
  if (routes === 'gateway') return { fields: FACADE_FIELDS, inputFields: FACADE_INPUT_FIELDS };
  const fields = Object.fromEntries(
    Object.entries(FACADE_FIELDS).map(([type, names]) => [
      type,
      names.filter((name) => !NAMED_ONLY_FIELDS[type]?.includes(name)),
    ]),
  );
  return { fields, inputFields: FACADE_INPUT_FIELDS };
}

import { Type } from '@sinclair/typebox';
import { type DepositCommon, depositFieldChecks } from '../../domain/wallet/deposit-service.js';
import { resolveAccountFieldChecks, withdrawFieldChecks } from '../../domain/wallet/payout-service.js';
import { transferFieldChecks } from '../../domain/wallet/wallet-service.js';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable, NairaAmount } from '../schemas.js';

/**
 * REST v1 wallet: the seed's deposit path, and paths chosen for the named operations beside it
 * (listed in docs/rest-v1.md). Money-moving routes honour Idempotency-Key.
 */
export const DEPOSIT_FIELDS = `id amount amountKobo reference currency method customization { title } customer { email phoneNumber name }
  accountNumber bankName accountName expiry_datetime note status redirectUrl narration
  nextAction { type requires_pin requires_otp redirect_url payment_instruction } failureReason version createdAt updatedAt`;
const PAYOUT_FIELDS =
  'id reference status amount amountKobo fee currency bankCode bankName accountNumber accountName narration failureReason version createdAt updatedAt';
/** The NGN wallet's balances, as the balance and portfolio routes answer them. */
export const WalletBalance = Type.Object(
  {
    currency: Type.String(),
    available: Type.Number(),
    availableKobo: Type.Integer(),
    held: Type.Number(),
    heldKobo: Type.Integer(),
    total: Type.Number(),
    totalKobo: Type.Integer(),
  },
  { title: 'WalletBalance' },
);
export const TRANSACTION_FIELDS =
  'id type status amount amountKobo fee currency reference description counterparty version createdAt updatedAt';

const Naira = NairaAmount();
const Reference = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Your unique reference; one is made when omitted.',
});
const Narration = Type.String({ maxLength: 140 });
const Url = Type.String({ maxLength: 2048 });

const DepositSchema = Type.Object(
  {
    id: Type.String(),
    amount: Type.Number(),
    amountKobo: Type.Integer(),
    reference: Type.String(),
    currency: Type.String({ examples: ['NGN'] }),
    method: Type.String({ examples: ['card', 'bank_transfer', 'ussd', 'payment_link', 'virtual_account'] }),
    customization: Nullable(Type.Object({ title: Nullable(Type.String()) })),
    customer: Nullable(
      Type.Object({
        email: Nullable(Type.String()),
        phoneNumber: Nullable(Type.String()),
        name: Nullable(Type.String()),
      }),
    ),
    accountNumber: Nullable(Type.String()),
    bankName: Nullable(Type.String()),
    accountName: Nullable(Type.String()),
    expiry_datetime: Nullable(DateTimeString),
    note: Nullable(Type.String()),
    status: Type.Union(['INITIATED', 'PENDING', 'COMPLETED', 'FAILED'].map((s) => Type.Literal(s))),
    redirectUrl: Nullable(Type.String()),
    narration: Nullable(Type.String()),
    nextAction: Nullable(
      Type.Object({
        type: Type.String({ examples: ['requires_pin', 'requires_otp', 'redirect_url', 'payment_instruction'] }),
        requires_pin: Nullable(Type.Object({}, { additionalProperties: true })),
        requires_otp: Nullable(Type.Object({}, { additionalProperties: true })),
        redirect_url: Nullable(Type.Object({}, { additionalProperties: true })),
        payment_instruction: Nullable(Type.Object({}, { additionalProperties: true })),
      }),
    ),
    failureReason: Nullable(Type.String()),
    version: Type.Integer(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'DepositResult' },
);

const PayoutSchema = Type.Object(
  {
    id: Type.String(),
    reference: Type.String(),
    status: Type.Union(['initiated', 'processing', 'completed', 'failed'].map((s) => Type.Literal(s))),
    amount: Type.Number(),
    amountKobo: Type.Integer(),
    fee: Type.Number(),
    currency: Type.String(),
    bankCode: Type.String(),
    bankName: Type.String(),
    accountNumber: Type.String(),
    accountName: Type.String(),
    narration: Nullable(Type.String()),
    failureReason: Nullable(Type.String()),
    version: Type.Integer(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'Payout' },
);

export const TransactionSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Union(['DEPOSIT', 'WITHDRAWAL', 'TRANSFER_IN', 'TRANSFER_OUT', 'BILL'].map((s) => Type.Literal(s))),
    status: Type.Union(['PENDING', 'COMPLETED', 'FAILED'].map((s) => Type.Literal(s))),
    amount: Type.Number(),
    amountKobo: Type.Integer(),
    fee: Type.Number(),
    currency: Type.String(),
    reference: Type.String(),
    description: Nullable(Type.String()),
    counterparty: Type.Any(),
    version: Type.Integer(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'WalletTransaction' },
);

const ReferenceParam = Type.Object({ reference: Type.String({ minLength: 1, maxLength: 80 }) });
const deposit = (operation: string, field: string) =>
  `mutation ${operation}($input: ${field === 'depositWithPaymentMethod' ? 'DepositWithPaymentMethodInput' : field === 'depositByUssd' ? 'UssdDepositInput' : field === 'createPaymentLink' ? 'PaymentLinkInput' : field === 'fundWallet' ? 'FundWalletInput' : 'DepositInput'}!) { ${field}(input: $input) { ${DEPOSIT_FIELDS} } }`;
const DEPOSIT_DESCRIPTION =
  'Honours Idempotency-Key: a retry with the same key and body returns the same deposit; the same key with another body is 422; while the first still runs, 409.';

export const walletRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/wallet/balance',
    tag: 'Wallet',
    summary: 'Wallet balance',
    operation:
      'query WalletBalance { walletBalance { currency available availableKobo held heldKobo total totalKobo } }',
    message: 'Wallet balance retrieved successfully',
    response: WalletBalance,
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/ledger',
    tag: 'Wallet',
    summary: 'Wallet ledger history',
    description: "The wallet account's ledger entries, newest first. Page with `before` = the last entry's createdAt.",
    operation:
      'query WalletLedger($first: Int, $before: DateTime) { walletLedger(first: $first, before: $before) { id amount amountKobo balanceAfter kind reference description createdAt } }',
    querystring: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
      before: Type.Optional(DateTimeString),
    }),
    variables: ({ query }) => ({ first: query.limit, before: query.before }),
    message: 'Ledger entries retrieved successfully',
    response: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          amount: Type.Number(),
          amountKobo: Type.Integer(),
          balanceAfter: Type.Number(),
          kind: Type.String(),
          reference: Type.String(),
          description: Nullable(Type.String()),
          createdAt: DateTimeString,
        },
        { title: 'LedgerEntry' },
      ),
    ),
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/deposit/payment-method',
    tag: 'Wallet deposits',
    summary: 'Deposit with a stored payment method',
    description: `The seed's deposit. A card is charged (nextAction says what it needs: requires_pin, then requires_otp, or redirect_url for 3DS); a bank account pays by transfer into the account returned. ${DEPOSIT_DESCRIPTION}`,
    operation: deposit('DepositWithPaymentMethod', 'depositWithPaymentMethod'),
    body: Type.Object({
      amount: Naira,
      paymentMethodId: Type.String({ minLength: 1 }),
      reference: Type.Optional(Reference),
      currency: Type.Optional(Type.Literal('NGN')),
      redirectUrl: Type.Optional(Url),
      meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
      narration: Type.Optional(Narration),
    }),
    fieldChecks: depositFieldChecks,
    variables: ({ body }) => ({ input: body }),
    message: 'Deposit initiated successfully',
    response: DepositSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/deposits/bank-transfer',
    tag: 'Wallet deposits',
    summary: 'Deposit by bank transfer',
    description: `A one-off account to transfer into, with its expiry (expiry_datetime). ${DEPOSIT_DESCRIPTION}`,
    operation: deposit('DepositByBankTransfer', 'depositByBankTransfer'),
    body: Type.Object({
      amount: Naira,
      reference: Type.Optional(Reference),
      currency: Type.Optional(Type.Literal('NGN')),
      narration: Type.Optional(Narration),
      meta: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
    fieldChecks: depositFieldChecks,
    variables: ({ body }) => ({ input: body }),
    message: 'Deposit initiated successfully',
    response: DepositSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/deposits/ussd',
    tag: 'Wallet deposits',
    summary: 'Deposit by USSD',
    description: `nextAction.payment_instruction.note holds the code to dial. ${DEPOSIT_DESCRIPTION}`,
    operation: deposit('DepositByUssd', 'depositByUssd'),
    body: Type.Object({
      amount: Naira,
      bankCode: Type.String({ minLength: 1, maxLength: 10 }),
      reference: Type.Optional(Reference),
      currency: Type.Optional(Type.Literal('NGN')),
      narration: Type.Optional(Narration),
    }),
    fieldChecks: depositFieldChecks,
    variables: ({ body }) => ({ input: body }),
    message: 'Deposit initiated successfully',
    response: DepositSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/deposits/payment-link',
    tag: 'Wallet deposits',
    summary: 'Hosted payment link',
    description: `nextAction.redirect_url.url is the checkout page; the link expires after an hour. ${DEPOSIT_DESCRIPTION}`,
    operation: deposit('CreatePaymentLink', 'createPaymentLink'),
    body: Type.Object({
      amount: Naira,
      redirectUrl: Url,
      title: Type.Optional(Type.String({ maxLength: 100 })),
      reference: Type.Optional(Reference),
      currency: Type.Optional(Type.Literal('NGN')),
      narration: Type.Optional(Narration),
    }),
    fieldChecks: (body: DepositCommon) => depositFieldChecks(body, { redirectUrlRequired: true }),
    variables: ({ body }) => ({ input: body }),
    message: 'Payment link created successfully',
    response: DepositSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/fund',
    tag: 'Wallet deposits',
    summary: 'Fund wallet with naira',
    description: `Any deposit method in one route: \`method\` is card (with paymentMethodId), bank_transfer, ussd (with bankCode) or payment_link (with redirectUrl). ${DEPOSIT_DESCRIPTION}`,
    operation: deposit('FundWallet', 'fundWallet'),
    body: Type.Object({
      amount: Naira,
      method: Type.Union(['card', 'bank_transfer', 'ussd', 'payment_link'].map((m) => Type.Literal(m))),
      paymentMethodId: Type.Optional(Type.String()),
      bankCode: Type.Optional(Type.String({ maxLength: 10 })),
      redirectUrl: Type.Optional(Url),
      title: Type.Optional(Type.String({ maxLength: 100 })),
      reference: Type.Optional(Reference),
      narration: Type.Optional(Narration),
    }),
    fieldChecks: depositFieldChecks,
    variables: ({ body }) => ({ input: body }),
    message: 'Deposit initiated successfully',
    response: DepositSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/deposits/:reference/authorize',
    tag: 'Wallet deposits',
    summary: 'Authorize a pending charge',
    description: 'Sends the PIN, OTP or 3DS result a pending card deposit waits for (`type`: pin, otp or three_ds).',
    operation: `mutation AuthorizeDeposit($reference: String!, $input: AuthorizeDepositInput!) { authorizeDeposit(reference: $reference, input: $input) { ${DEPOSIT_FIELDS} } }`,
    params: ReferenceParam,
    body: Type.Object({
      type: Type.Union(['pin', 'otp', 'three_ds'].map((t) => Type.Literal(t))),
      pin: Type.Optional(Type.String({ maxLength: 8 })),
      otp: Type.Optional(Type.String({ maxLength: 8 })),
    }),
    variables: ({ params, body }) => ({ reference: params.reference, input: body }),
    status: 200,
    message: 'Deposit authorized successfully',
    response: DepositSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/deposits/:reference',
    tag: 'Wallet deposits',
    summary: 'Payment status by reference',
    operation: `query Deposit($reference: String!) { deposit(reference: $reference) { ${DEPOSIT_FIELDS} } }`,
    params: ReferenceParam,
    message: 'Deposit retrieved successfully',
    response: DepositSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/virtual-account',
    tag: 'Wallet account',
    summary: 'Create the permanent virtual account',
    description:
      "The user's permanent account number; transfers into it fund the wallet. Calling again returns the same account.",
    operation:
      'mutation CreateVirtualAccount { createVirtualAccount { accountNumber bankName accountName createdAt } }',
    message: 'Virtual account retrieved successfully',
    response: Type.Object(
      {
        accountNumber: Type.String(),
        bankName: Type.String(),
        accountName: Type.String(),
        createdAt: DateTimeString,
      },
      { title: 'VirtualAccount' },
    ),
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/sandbox/virtual-account/transfer',
    tag: 'Wallet account',
    summary: 'Simulate a transfer into the virtual account (sandbox only)',
    operation: `mutation SimulateVirtualAccountTransfer($amount: Float!) { simulateVirtualAccountTransfer(amount: $amount) { ${DEPOSIT_FIELDS} } }`,
    body: Type.Object({ amount: Naira }),
    variables: ({ body }) => ({ amount: (body as { amount: number }).amount }),
    message: 'Transfer received successfully',
    response: DepositSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/banks',
    tag: 'Wallet payouts',
    summary: 'List banks',
    operation: 'query Banks { banks { code name } }',
    message: 'Banks retrieved successfully',
    response: Type.Array(Type.Object({ code: Type.String(), name: Type.String() }, { title: 'Bank' })),
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/banks/resolve',
    tag: 'Wallet payouts',
    summary: 'Resolve an account number to a name',
    operation:
      'query ResolveBankAccount($bankCode: String!, $accountNumber: String!) { resolveBankAccount(bankCode: $bankCode, accountNumber: $accountNumber) { bankCode accountNumber accountName } }',
    body: Type.Object({
      bankCode: Type.String({ minLength: 1, maxLength: 10 }),
      accountNumber: Type.String({ minLength: 1, maxLength: 20 }),
    }),
    fieldChecks: resolveAccountFieldChecks,
    variables: ({ body }) => body as Record<string, unknown>,
    status: 200,
    message: 'Account resolved successfully',
    response: Type.Object(
      { bankCode: Type.String(), accountNumber: Type.String(), accountName: Type.String() },
      { title: 'ResolvedBankAccount' },
    ),
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/withdraw',
    tag: 'Wallet payouts',
    summary: 'Withdraw to a bank account',
    description:
      'Holds amount + ₦25 fee at once, sends the transfer, captures on success or releases on failure. A provider timeout answers `processing`; the final state arrives as a payout.* event. Honours Idempotency-Key.',
    operation: `mutation Withdraw($input: WithdrawInput!) { withdraw(input: $input) { ${PAYOUT_FIELDS} } }`,
    body: Type.Object({
      amount: Naira,
      bankCode: Type.String({ minLength: 1, maxLength: 10 }),
      accountNumber: Type.String({ minLength: 1, maxLength: 20 }),
      narration: Type.Optional(Type.String({ maxLength: 100 })),
      reference: Type.Optional(Reference),
    }),
    fieldChecks: withdrawFieldChecks,
    variables: ({ body }) => ({ input: body }),
    message: 'Withdrawal initiated successfully',
    response: PayoutSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/payouts/:reference',
    tag: 'Wallet payouts',
    summary: 'A payout by reference',
    operation: `query Payout($reference: String!) { payout(reference: $reference) { ${PAYOUT_FIELDS} } }`,
    params: ReferenceParam,
    message: 'Payout retrieved successfully',
    response: PayoutSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/wallet/transfer',
    tag: 'Wallet payouts',
    summary: 'Transfer to another user',
    description:
      'Instant and atomic: both wallets change or neither. `recipient` is a user id or email. Honours Idempotency-Key.',
    operation: `mutation Transfer($input: TransferInput!) { transfer(input: $input) { ${TRANSACTION_FIELDS} } }`,
    body: Type.Object({
      amount: Naira,
      recipient: Type.String({ minLength: 1, maxLength: 254 }),
      narration: Type.Optional(Narration),
      reference: Type.Optional(Reference),
    }),
    fieldChecks: transferFieldChecks,
    variables: ({ body }) => ({ input: body }),
    message: 'Transfer completed successfully',
    response: TransactionSchema,
  },
]);

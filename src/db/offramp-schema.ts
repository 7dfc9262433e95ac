import { bigint, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tokenUnits, updatedAt } from './columns.js';
import { ownerColumns } from './schema.js';

export const offrampStatusEnum = pgEnum('offramp_status', [
  'initiated',
  'deposit_received',
  'processing',
  'fiat_sent',
  'completed',
  'failed',
  'expired',
  'refunded',
]);

/**
 * A crypto-to-fiat order: the sender pays `amount + fees` of `token` on `network` into
 * `receiveAddress` before `validUntil`; the provider pays `fiatAmountMinor` to the recipient bank.
 * Token amounts are raw base units; the fiat amount is in minor units (kobo, pesewas, cents).
 */
export const offrampOrders = pgTable(
  'offramp_orders',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    reference: text('reference').notNull(),
    provider: text('provider').notNull(),
    providerOrderId: text('provider_order_id').notNull(),
    token: text('token').notNull(),
    network: text('network').notNull(),
    decimals: integer('decimals').notNull(),
    amountRaw: tokenUnits('amount_raw').notNull(),
    senderFeeRaw: tokenUnits('sender_fee_raw').notNull(),
    transactionFeeRaw: tokenUnits('transaction_fee_raw').notNull(),
    /** Fiat per token, as the provider's decimal text. */
    rate: text('rate').notNull(),
    fiat: text('fiat').notNull(),
    fiatAmountMinor: bigint('fiat_amount_minor', { mode: 'bigint' }).notNull(),
    receiveAddress: text('receive_address').notNull(),
    validUntil: timestamp('valid_until', { withTimezone: true, mode: 'date' }).notNull(),
    institutionCode: text('institution_code').notNull(),
    bankName: text('bank_name').notNull(),
    accountNumber: text('account_number').notNull(),
    accountName: text('account_name').notNull(),
    memo: text('memo'),
    refundAddress: text('refund_address'),
    status: offrampStatusEnum('status').notNull().default('initiated'),
    failureReason: text('failure_reason'),
    txHash: text('tx_hash'),
    /** The creating request's Idempotency-Key, and a hash of its input: a retry replays this order. */
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash').notNull(),
    /** Bumped by every change, so receivers can order updates that arrive out of order. */
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('offramp_orders_owner_reference_key').on(t.userId, t.environment, t.reference),
    uniqueIndex('offramp_orders_owner_idempotency_key').on(t.userId, t.environment, t.idempotencyKey),
    uniqueIndex('offramp_orders_provider_order_key').on(t.provider, t.providerOrderId),
    index('offramp_orders_owner_created_idx').on(t.userId, t.environment, t.createdAt),
  ],
);

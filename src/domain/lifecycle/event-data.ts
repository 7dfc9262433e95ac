import type { billRecords } from '../../db/bills-schema.js';
import type { offrampOrders } from '../../db/offramp-schema.js';
import type { deposits, payouts, walletTransactions } from '../../db/wallet-schema.js';
import { formatUnits } from '../money/decimal.js';
import type {
  BillEventData,
  DepositEventData,
  OfframpEventData,
  PayoutEventData,
  TransactionEventData,
} from '../events/payloads.js';
import { nairaNumber } from '../wallet/naira.js';

/** Each operation's event `data` from its row: the one builder its producers share. */
export const eventData = {
  deposit: (row: typeof deposits.$inferSelect): DepositEventData => ({
    reference: row.reference,
    status: row.status.toUpperCase() as DepositEventData['status'],
    amount: nairaNumber(row.amount),
    currency: row.currency,
    method: row.method,
    accountNumber: row.accountNumber,
    bankName: row.bankName,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
  }),
  payout: (row: typeof payouts.$inferSelect): PayoutEventData => ({
    reference: row.reference,
    status: row.status,
    amount: nairaNumber(row.amount),
    fee: nairaNumber(row.fee),
    currency: 'NGN',
    bankName: row.bankName,
    accountNumber: row.accountNumber,
    accountName: row.accountName,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
  }),
  bill: (row: typeof billRecords.$inferSelect): BillEventData => ({
    reference: row.reference,
    status: row.status as BillEventData['status'],
    amount: nairaNumber(row.amount),
    currency: 'NGN',
    billerName: row.billerName,
    customerName: row.customerName,
    customerId: row.customer,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
  }),
  transaction: (row: typeof walletTransactions.$inferSelect, stage?: string): TransactionEventData => ({
    id: row.id,
    reference: row.reference,
    type: row.type,
    status: row.status,
    amount: nairaNumber(row.amount),
    currency: row.currency,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
    ...(stage ? { stage } : {}),
  }),
  /** The crypto amount as decimal text, the fiat amount as a number (two decimals for every fiat). */
  offramp: (row: typeof offrampOrders.$inferSelect): OfframpEventData => ({
    reference: row.reference,
    status: row.status,
    amount: formatUnits(row.amountRaw, row.decimals),
    token: row.token,
    network: row.network,
    fiatAmount: Number(formatUnits(row.fiatAmountMinor, 2)),
    fiatCurrency: row.fiat,
    bankName: row.bankName,
    accountNumber: row.accountNumber,
  }),
};

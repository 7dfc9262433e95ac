import type { offrampOrders } from '../../db/offramp-schema.js';
import { formatFixed, formatUnits } from '../money/decimal.js';
import {
  FIAT_DECIMALS,
  type FiatCurrency,
  type OfframpNetwork,
  type OfframpStatus,
  type OfframpToken,
} from './catalogue.js';

export type OfframpOrderRow = typeof offrampOrders.$inferSelect;

/** An offramp order as the API shows it: token amounts as decimal strings in token units. */
export interface OfframpOrder {
  id: string;
  reference: string;
  status: OfframpStatus;
  token: OfframpToken;
  network: OfframpNetwork;
  amount: string;
  senderFee: string;
  transactionFee: string;
  /** What the sender must pay into `receiveAddress`: amount plus both fees. */
  amountToSend: string;
  rate: string;
  fiat: FiatCurrency;
  fiatAmount: string;
  receiveAddress: string;
  validUntil: Date;
  recipient: { institution: string; bankName: string; accountNumber: string; accountName: string; memo: string | null };
  refundAddress: string | null;
  failureReason: string | null;
  txHash: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export function toOfframpOrder(row: OfframpOrderRow): OfframpOrder {
  return {
    id: row.id,
    reference: row.reference,
    status: row.status,
    token: row.token as OfframpToken,
    network: row.network as OfframpNetwork,
    amount: formatUnits(row.amountRaw, row.decimals),
    senderFee: formatUnits(row.senderFeeRaw, row.decimals),
    transactionFee: formatUnits(row.transactionFeeRaw, row.decimals),
    amountToSend: formatUnits(row.amountRaw + row.senderFeeRaw + row.transactionFeeRaw, row.decimals),
    rate: row.rate,
    fiat: row.fiat as FiatCurrency,
    fiatAmount: formatFixed(row.fiatAmountMinor, FIAT_DECIMALS),
    receiveAddress: row.receiveAddress,
    validUntil: row.validUntil,
    recipient: {
      institution: row.institutionCode,
      bankName: row.bankName,
      accountNumber: row.accountNumber,
      accountName: row.accountName,
      memo: row.memo,
    },
    refundAddress: row.refundAddress,
    failureReason: row.failureReason,
    txHash: row.txHash,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

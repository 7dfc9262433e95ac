import type { virtualAccounts } from '../../db/wallet-schema.js';

/** Shapes the GraphQL layer maps from (codegen mappers); amounts stay kobo until the edge. */
export interface WalletBalanceModel {
  currency: string;
  available: bigint;
  held: bigint;
  total: bigint;
}

export interface LedgerEntryModel {
  id: string;
  amount: bigint;
  balanceAfter: bigint;
  kind: string;
  reference: string;
  description: string | null;
  createdAt: Date;
}

export type VirtualAccountModel = typeof virtualAccounts.$inferSelect;

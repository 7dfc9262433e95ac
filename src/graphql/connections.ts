import { encodeCursor, type PageOf } from '../domain/keyset.js';
import type { Activity } from '../domain/activity/activity.js';
import type { BusinessCustomerRow } from '../domain/customers/customer-service.js';
import type { BillRecordRow } from '../domain/bills/bill-record.js';
import type { OfframpOrder } from '../domain/offramp/offramp-order.js';
import type { TransferView } from '../domain/solana/transfer-view.js';
import type { DepositRow } from '../domain/wallet/deposit-service.js';
import type { PayoutRow } from '../domain/wallet/payout-service.js';
import type { WalletTransactionRow } from '../domain/wallet/transaction-store.js';

/**
 * A Relay connection as resolvers hand it to GraphQL. `totalCount` costs a query of its own, so it
 * is a thunk the field runs only when selected (and under a key no field has: mapped objects
 * stay plain data for graphql-jit).
 */
export interface ConnectionModel<T> {
  edges: Array<{ cursor: string; node: T }>;
  nodes: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  countAll: () => Promise<number>;
}

/** A fetched window as a connection, each row mapped to what GraphQL shows. */
export async function connectionOf<Row, T>(
  page: PageOf<Row>,
  toNode: (row: Row) => T | Promise<T>,
  countAll: () => Promise<number>,
): Promise<ConnectionModel<T>> {
  const edges = await Promise.all(
    page.items.map(async ({ row, position }) => ({ cursor: encodeCursor(position), node: await toNode(row) })),
  );
  return {
    edges,
    nodes: edges.map((e) => e.node),
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    countAll,
  };
}

export type TransactionConnectionModel = ConnectionModel<Activity>;
export type WalletTransactionConnectionModel = ConnectionModel<WalletTransactionRow>;
export type DepositConnectionModel = ConnectionModel<DepositRow>;
export type PayoutConnectionModel = ConnectionModel<PayoutRow>;
export type BillRecordConnectionModel = ConnectionModel<BillRecordRow>;
export type OfframpOrderConnectionModel = ConnectionModel<OfframpOrder>;
export type SolanaTransferConnectionModel = ConnectionModel<TransferView>;
export type BusinessCustomerConnectionModel = ConnectionModel<BusinessCustomerRow>;

import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';
import { MAX_TRANSACTIONS_PAGE } from '../../domain/wallet/wallet-service.js';
import { DateFilter, PageOf, PageQuery, pageAndFilter } from '../schemas.js';
import { TRANSACTION_FIELDS, TransactionSchema } from './wallet.js';

export const transactionRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/transactions',
    tag: 'Transactions',
    summary: 'List transactions',
    description:
      "The user's wallet transactions, newest first. Amount bounds are naira, inclusive; `search` matches part of the reference.",
    operation: `query WalletTransactions($filter: TransactionFilter, $page: Int, $limit: Int) {
      walletTransactions(filter: $filter, page: $page, limit: $limit) { transactions { ${TRANSACTION_FIELDS} } page limit total totalPages hasNext hasPrev } }`,
    querystring: Type.Object({
      type: Type.Optional(
        Type.Union(['DEPOSIT', 'WITHDRAWAL', 'TRANSFER_IN', 'TRANSFER_OUT', 'BILL'].map((s) => Type.Literal(s))),
      ),
      status: Type.Optional(Type.Union(['PENDING', 'COMPLETED', 'FAILED'].map((s) => Type.Literal(s)))),
      from: Type.Optional(DateFilter('Created at or after (a date: from its start).')),
      to: Type.Optional(DateFilter('Created before a date-time, or on or before a date (inclusive).')),
      minAmount: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      maxAmount: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      ...PageQuery(MAX_TRANSACTIONS_PAGE),
    }),
    variables: pageAndFilter,
    message: 'Transactions retrieved successfully',
    response: PageOf('transactions', TransactionSchema, 'WalletTransactionPage'),
  },
  {
    method: 'GET',
    path: '/api/v1/transactions/reference/:reference',
    tag: 'Transactions',
    summary: 'A transaction by reference',
    operation: `query WalletTransactionByReference($reference: String!) { walletTransactionByReference(reference: $reference) { ${TRANSACTION_FIELDS} } }`,
    // 64 for a reference given, up to 104 for a recipient's `<reference>:in:<sender id>`.
    params: Type.Object({ reference: Type.String({ minLength: 1, maxLength: 104 }) }),
    message: 'Transaction retrieved successfully',
    response: TransactionSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/transactions/:id',
    tag: 'Transactions',
    summary: 'A transaction by id',
    operation: `query WalletTransaction($id: ID!) { walletTransaction(id: $id) { ${TRANSACTION_FIELDS} } }`,
    params: Type.Object({ id: Type.String() }),
    message: 'Transaction retrieved successfully',
    response: TransactionSchema,
  },
]);

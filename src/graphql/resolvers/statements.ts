import { statementCsv } from '../../domain/ledger/statement-csv.js';
import { nairaNumber } from '../../domain/wallet/naira.js';
import type { Resolvers } from '../generated/resolvers-types.js';

const kobo = (value: bigint) => Number(value);

export const statementResolvers: Resolvers = {
  Query: {
    walletBalances: (_root, { at }, { principal, services }) =>
      services.statements.balances(principal!, at ?? undefined),
    walletStatement: (_root, { from, to, first, after }, { principal, services }) =>
      services.statements.statement(principal!, { from, to, limit: first ?? 100, after: after ?? undefined }),
  },
  WalletBalances: {
    available: (b) => nairaNumber(b.available),
    availableKobo: (b) => kobo(b.available),
    pending: (b) => nairaNumber(b.pending),
    pendingKobo: (b) => kobo(b.pending),
    posted: (b) => nairaNumber(b.posted),
    postedKobo: (b) => kobo(b.posted),
  },
  WalletStatement: {
    openingBalance: (s) => nairaNumber(s.openingBalance),
    openingBalanceKobo: (s) => kobo(s.openingBalance),
    closingBalance: (s) => nairaNumber(s.closingBalance),
    closingBalanceKobo: (s) => kobo(s.closingBalance),
    totalCredits: (s) => nairaNumber(s.totalCredits),
    totalCreditsKobo: (s) => kobo(s.totalCredits),
    totalDebits: (s) => nairaNumber(s.totalDebits),
    totalDebitsKobo: (s) => kobo(s.totalDebits),
    csv: (s) => statementCsv(s),
  },
  StatementLine: {
    amount: (l) => nairaNumber(l.amount),
    amountKobo: (l) => kobo(l.amount),
    balance: (l) => nairaNumber(l.balance),
    balanceKobo: (l) => kobo(l.balance),
  },
};

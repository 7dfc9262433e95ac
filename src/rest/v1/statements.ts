import { Type } from '@sinclair/typebox';
import { MAX_STATEMENT_PAGE } from '../../domain/ledger/statements.js';
import { statementBound } from '../../domain/ledger/statement-service.js';
import { defineRoutes, type RouteInput } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

/**
 * REST v1 wallet balances as of an instant and statements (paths of ours beside the spec's
 * wallet paths; docs/wallet.md). Dates: YYYY-MM-DD in Africa/Lagos time (`to` inclusive) or an
 * ISO date-time (`to` exclusive).
 */
const LINE_FIELDS = 'id postedAt amount amountKobo balance balanceKobo postingId kind reference description';
const STATEMENT_FIELDS = `currency from to openingBalance openingBalanceKobo closingBalance closingBalanceKobo
  totalCredits totalCreditsKobo totalDebits totalDebitsKobo entryCount nextCursor`;
const STATEMENT_QUERY = (fields: string) =>
  `query WalletStatement($from: DateTime!, $to: DateTime!, $first: Int, $after: ID) {
    walletStatement(from: $from, to: $to, first: $first, after: $after) { ${fields} } }`;

const Bound = (what: string) =>
  Type.String({
    minLength: 10,
    maxLength: 40,
    description: `${what}: YYYY-MM-DD (Africa/Lagos) or an ISO date-time.`,
    examples: ['2026-11-01'],
  });
const StatementQuery = Type.Object({
  from: Bound('Start, inclusive'),
  to: Bound('End: a date is included whole; a date-time is exclusive'),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STATEMENT_PAGE, default: 100 })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "The previous page's nextCursor." })),
});
const statementVariables = ({ query }: RouteInput) => ({
  from: statementBound(String(query['from']), 'from'),
  to: statementBound(String(query['to']), 'to'),
  first: query['limit'],
  after: query['after'],
});

const Money = (name: string, description: string) => ({
  [name]: Type.Number({ description: `${description}, naira.` }),
  [`${name}Kobo`]: Type.Integer({ description: `${description}, kobo.` }),
});

export const statementRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/wallet/balances',
    tag: 'Wallet statements',
    summary: 'Wallet balances now or as of an instant',
    description:
      'available (spendable), pending (reserved by payouts and bill payments in flight) and posted (available + pending), from the ledger entries posted at or before `at`.',
    operation: `query WalletBalances($at: DateTime) { walletBalances(at: $at) {
      currency at available availableKobo pending pendingKobo posted postedKobo } }`,
    querystring: Type.Object({
      at: Type.Optional(DateTimeString),
    }),
    message: 'Wallet balances retrieved successfully',
    response: Type.Object(
      {
        currency: Type.String(),
        at: Nullable(DateTimeString),
        ...Money('available', 'Spendable'),
        ...Money('pending', 'Reserved by operations in flight'),
        ...Money('posted', 'Available + pending'),
      },
      { title: 'WalletBalances' },
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/statement',
    tag: 'Wallet statements',
    summary: 'Wallet statement for a date range',
    description:
      'Opening balance (just before `from`), every wallet ledger entry in order with its posting (ledger transaction) and reference and the running balance, and the closing balance. Pages of `limit` entries: pass `nextCursor` as `after`.',
    operation: STATEMENT_QUERY(`${STATEMENT_FIELDS} lines { ${LINE_FIELDS} }`),
    querystring: StatementQuery,
    variables: statementVariables,
    message: 'Wallet statement retrieved successfully',
    response: Type.Object(
      {
        currency: Type.String(),
        from: DateTimeString,
        to: DateTimeString,
        ...Money('openingBalance', 'Balance just before from'),
        ...Money('closingBalance', 'Balance just before to'),
        ...Money('totalCredits', 'Sum of credits in the range'),
        ...Money('totalDebits', 'Sum of debits in the range (positive)'),
        entryCount: Type.Integer({ description: 'Entries in the whole range (all pages).' }),
        nextCursor: Nullable(Type.String()),
        lines: Type.Array(
          Type.Object(
            {
              id: Type.String(),
              postedAt: DateTimeString,
              ...Money('amount', 'Positive credits the wallet, negative debits it'),
              ...Money('balance', 'Balance after this entry'),
              postingId: Type.String(),
              kind: Type.String({ examples: ['deposit', 'transfer', 'hold', 'release', 'reversal'] }),
              reference: Type.String(),
              description: Nullable(Type.String()),
            },
            { title: 'StatementLine' },
          ),
        ),
      },
      { title: 'WalletStatement' },
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/wallet/statement.csv',
    operationId: 'walletStatementCsv',
    tag: 'Wallet statements',
    summary: 'Wallet statement as CSV',
    description:
      'The same statement page as CSV: an opening-balance row, one row per entry (naira and kobo), and on the last page a closing-balance row. When more pages follow, the `X-Next-Cursor` header holds the `after` for the next one.',
    operation: STATEMENT_QUERY('from to nextCursor csv'),
    querystring: StatementQuery,
    variables: statementVariables,
    message: 'Wallet statement retrieved successfully',
    csv: (payload) => {
      // In-process execution leaves DateTime values as Dates (JSON serialisation is what makes them text).
      const page = payload as { from: string | Date; to: string | Date; nextCursor: string | null; csv: string };
      const day = (value: string | Date) => new Date(value).toISOString().slice(0, 10);
      return {
        body: page.csv,
        filename: `statement-${day(page.from)}-${day(page.to)}.csv`,
        headers: page.nextCursor ? { 'x-next-cursor': page.nextCursor } : ({} as Record<string, string>),
      };
    },
    response: Type.String(),
  },
]);

import { nairaText } from '../wallet/naira.js';
import type { Statement } from './statements.js';

/** A CSV field: quoted when it holds a separator, quote or line break; formula starts defused. */
function field(value: string): string {
  // A spreadsheet would run a cell starting with = + - @ as a formula; descriptions are partner text.
  const safe = /^[=+\-@\t\r]/.test(value) && !/^-?\d/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const naira = (kobo: bigint) => nairaText(kobo);

/**
 * One page of a statement as CSV (RFC 4180, CRLF): an opening row, one row per entry, a closing
 * row. Amounts are naira with two decimals and kobo beside them, so nothing is lost in a sheet.
 */
export function statementCsv(statement: Statement): string {
  const header = [
    'date',
    'type',
    'reference',
    'description',
    'amount',
    'amount_kobo',
    'balance',
    'balance_kobo',
    'posting_id',
    'entry_id',
  ];
  const rows: string[][] = [header];
  const first = statement.lines[0];
  const pageOpening = first ? first.balance - first.amount : statement.openingBalance;
  rows.push([
    statement.from.toISOString(),
    'opening_balance',
    '',
    first && pageOpening !== statement.openingBalance ? 'Balance brought forward' : 'Opening balance',
    '',
    '',
    naira(pageOpening),
    pageOpening.toString(),
    '',
    '',
  ]);
  for (const line of statement.lines) {
    rows.push([
      line.postedAt.toISOString(),
      line.kind,
      line.reference,
      line.description ?? '',
      naira(line.amount),
      line.amount.toString(),
      naira(line.balance),
      line.balance.toString(),
      line.postingId,
      line.id,
    ]);
  }
  if (statement.nextCursor === null) {
    rows.push([
      statement.to.toISOString(),
      'closing_balance',
      '',
      'Closing balance',
      '',
      '',
      naira(statement.closingBalance),
      statement.closingBalance.toString(),
      '',
      '',
    ]);
  }
  return `${rows.map((row) => row.map(field).join(',')).join('\r\n')}\r\n`;
}

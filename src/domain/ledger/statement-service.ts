import type { Database } from '../../db/client.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Principal } from '../auth/principal.js';
import { badInput } from '../errors.js';
import { type Statement, type WalletBalancesAt, walletBalancesAt, walletStatement } from './statements.js';

/** The caller's own wallet balances as of an instant, and statements for a date range. */
export class WalletStatements {
  constructor(private readonly db: Database) {}

  balances(principal: Principal, at?: Date): Promise<WalletBalancesAt> {
    if (at && Number.isNaN(at.getTime())) throw badInput('at', 'at must be a date-time.');
    return walletBalancesAt(readsOf(this.db), principal.environment, principal.userId, at);
  }

  statement(principal: Principal, query: { from: Date; to: Date; limit: number; after?: string }): Promise<Statement> {
    return walletStatement(readsOf(this.db), principal.environment, principal.userId, query);
  }
}

const LAGOS_DATE = /^\d{4}-\d{2}-\d{2}$/;
const invalidBound = (field: string) => badInput(field, `${field} must be a YYYY-MM-DD date or an ISO date-time.`);

/**
 * A REST date bound as an instant: YYYY-MM-DD is Lagos midnight (for `to`, the next one: the day
 * is included); anything else must be a full ISO date-time. Invalid → 400 naming the field.
 */
export function statementBound(value: string, field: 'from' | 'to'): string {
  if (LAGOS_DATE.test(value)) {
    // A real calendar day (2026-02-30 is not), then Lagos midnight: UTC+1 all year.
    const utc = new Date(`${value}T00:00:00Z`);
    if (Number.isNaN(utc.getTime()) || utc.toISOString().slice(0, 10) !== value) throw invalidBound(field);
    const midnight = utc.getTime() - 3_600_000 + (field === 'to' ? 86_400_000 : 0);
    return new Date(midnight).toISOString();
  }
  const instant = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(instant.getTime())) throw invalidBound(field);
  return instant.toISOString();
}

import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import { nairaText } from '../wallet/naira.js';

/** Payouts to a bank account the user added recently are capped until the period has passed. */
export interface CoolingOffPolicy {
  periodMs: number;
  /** The most a payout may be while the destination is cooling off, kobo. */
  capKobo: bigint;
  /** Production always; sandbox only when asked (its money is not real). */
  sandbox?: boolean;
}

export const COOLING_OFF_LIMIT = 'payout_destination_cooling_off';

/**
 * A stolen key's quickest way to drain a wallet is a payout to an account the thief controls. A
 * destination counts as added when the user saved it as a bank-account payment method, or when a
 * payout to it first completed; one never seen is added now. Until `periodMs` has passed since
 * then, a payout above `capKobo` is refused (403, naming the limit and when it lifts).
 */
export async function checkPayoutDestination(
  db: Executor,
  principal: Principal,
  destination: { bankCode: string; accountNumber: string; amount: bigint },
  policy: CoolingOffPolicy,
  now: Date,
): Promise<void> {
  if (policy.periodMs <= 0 || destination.amount <= policy.capKobo) return;
  if (principal.environment === 'sandbox' && !policy.sandbox) return;
  // One round trip: the earlier of "saved as a payment method" and "first paid"; least() skips nulls.
  const [row] = await queryRows<{ added_at: Date | string | null }>(
    db,
    sql`/* payoutDestinationAddedAt */ select least(
        (select min(created_at) from payment_methods
          where user_id = ${principal.userId} and environment = ${principal.environment} and type = 'bank_account'
            and bank_code = ${destination.bankCode} and account_number = ${destination.accountNumber}
            and deleted_at is null),
        (select min(created_at) from payouts
          where user_id = ${principal.userId} and environment = ${principal.environment} and status = 'completed'
            and bank_code = ${destination.bankCode} and account_number = ${destination.accountNumber})
      ) as added_at`,
  );
  const addedAt = row?.added_at ? new Date(row.added_at) : now;
  const liftsAt = new Date(addedAt.getTime() + policy.periodMs);
  if (now >= liftsAt) return;
  throw new DomainError(
    'FORBIDDEN',
    `Limit ${COOLING_OFF_LIMIT}: this bank account was added less than ${Math.round(policy.periodMs / 60_000)} minutes ago, so a payout to it may be at most ₦${nairaText(policy.capKobo)} until ${liftsAt.toISOString()}.`,
    { field: 'amount' },
  );
}

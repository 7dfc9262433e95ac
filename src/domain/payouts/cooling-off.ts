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
 * then, payouts to it (this one and every earlier one not failed) may total at most `capKobo`; one
 * past that is refused (403, naming the limit and when it lifts). Call it inside the transaction
 * that holds the money, so the advisory lock serialises concurrent payouts to one destination.
 */
/** Whether the policy applies to the principal's payouts at all (a check with a lock of its own when it does). */
export const coolingOffApplies = (policy: CoolingOffPolicy, principal: Principal): boolean =>
  policy.periodMs > 0 && (principal.environment !== 'sandbox' || policy.sandbox === true);

export async function checkPayoutDestination(
  db: Executor,
  principal: Principal,
  destination: { bankCode: string; accountNumber: string; amount: bigint },
  policy: CoolingOffPolicy,
  now: Date,
): Promise<void> {
  if (!coolingOffApplies(policy, principal)) return;
  // Concurrent payouts to one destination take turns, so together they cannot pass the cap.
  await db.execute(
    sql`select pg_advisory_xact_lock(hashtext(${`cooling-off:${principal.userId}:${destination.bankCode}:${destination.accountNumber}`}))`,
  );
  // One round trip: when the destination was added (the earlier of first saved and first paid;
  // least() skips nulls), and what has gone or is going to it since, so splitting a payout into
  // several under the cap does not get around it.
  const destinationOf = (table: string) =>
    sql`${sql.raw(table)}.user_id = ${principal.userId} and ${sql.raw(table)}.environment = ${principal.environment}
      and ${sql.raw(table)}.bank_code = ${destination.bankCode} and ${sql.raw(table)}.account_number = ${destination.accountNumber}`;
  const [row] = await queryRows<{ added_at: Date | string | null; sent: string | number | null }>(
    db,
    sql`/* payoutDestinationCoolingOff */ with added as (
        select least(
          (select min(created_at) from payment_methods
            where ${destinationOf('payment_methods')} and type = 'bank_account' and deleted_at is null),
          (select min(created_at) from payouts where ${destinationOf('payouts')} and status = 'completed')
        ) as at
      )
      select added.at as added_at,
        (select coalesce(sum(amount), 0) from payouts
          where ${destinationOf('payouts')} and status <> 'failed' and (added.at is null or created_at >= added.at)) as sent
      from added`,
  );
  const addedAt = row?.added_at ? new Date(row.added_at) : now;
  if (BigInt(row?.sent ?? 0) + destination.amount <= policy.capKobo) return;
  const liftsAt = new Date(addedAt.getTime() + policy.periodMs);
  if (now >= liftsAt) return;
  throw new DomainError(
    'FORBIDDEN',
    `Limit ${COOLING_OFF_LIMIT}: this bank account was added less than ${Math.round(policy.periodMs / 60_000)} minutes ago, so payouts to it may total at most ₦${nairaText(policy.capKobo)} until ${liftsAt.toISOString()}.`,
    { field: 'amount' },
  );
}

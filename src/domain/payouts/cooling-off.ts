import { and, eq, isNull, min } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { paymentMethods, payouts } from '../../db/wallet-schema.js';
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
  const owner = (table: typeof paymentMethods | typeof payouts) =>
    and(eq(table.userId, principal.userId), eq(table.environment, principal.environment));
  const [saved] = await db
    .select({ at: min(paymentMethods.createdAt) })
    .from(paymentMethods)
    .where(
      and(
        owner(paymentMethods),
        eq(paymentMethods.type, 'bank_account'),
        eq(paymentMethods.bankCode, destination.bankCode),
        eq(paymentMethods.accountNumber, destination.accountNumber),
        isNull(paymentMethods.deletedAt),
      ),
    );
  const [paid] = await db
    .select({ at: min(payouts.createdAt) })
    .from(payouts)
    .where(
      and(
        owner(payouts),
        eq(payouts.status, 'completed'),
        eq(payouts.bankCode, destination.bankCode),
        eq(payouts.accountNumber, destination.accountNumber),
      ),
    );
  const known = [saved?.at, paid?.at]
    .filter((d): d is Date => d instanceof Date || typeof d === 'string')
    .map((d) => new Date(d));
  const addedAt = known.length ? new Date(Math.min(...known.map((d) => d.getTime()))) : now;
  const liftsAt = new Date(addedAt.getTime() + policy.periodMs);
  if (now >= liftsAt) return;
  throw new DomainError(
    'FORBIDDEN',
    `Limit ${COOLING_OFF_LIMIT}: this bank account was added less than ${Math.round(policy.periodMs / 60_000)} minutes ago, so a payout to it may be at most ₦${nairaText(policy.capKobo)} until ${liftsAt.toISOString()}.`,
    { field: 'amount' },
  );
}

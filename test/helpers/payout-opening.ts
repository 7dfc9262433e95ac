import type { Principal } from '../../src/domain/auth/principal.js';
import type { KeyedOpen } from '../../src/domain/money/held-operation.js';
import type { PayoutRow } from '../../src/domain/wallet/payout-store.js';
import type { Services } from '../../src/services.js';

/**
 * A payout's first commit as the service describes it to the held operation (its private
 * `opening`): ₦1,000 to a sandbox account, keyed by `key` when one is given.
 */
export function payoutOpening(
  services: Services,
  principal: Principal,
  o: { reference: string; narration: string | null; key: string | undefined; now: Date },
): KeyedOpen<PayoutRow> {
  const payouts = services.payouts as unknown as { opening: (...args: unknown[]) => KeyedOpen<PayoutRow> };
  return payouts.opening(
    principal,
    'sandbox',
    {
      amount: 100_000n,
      reference: o.reference,
      bank: { code: '044', name: 'Access Bank' },
      accountNumber: '0123456789',
      accountName: 'Ada Obi',
      narration: o.narration,
    },
    {
      scope: { ...principal, operation: 'wallet.withdraw' },
      key: o.key,
      input: o.key ? { reference: o.reference } : {},
    },
    o.now,
  );
}

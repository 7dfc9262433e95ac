import type { Caller } from '../users/user-directory.js';
import type { DepositCommon, DepositService } from './deposit-service.js';
import type { DepositResult } from './deposit-result.js';

/**
 * NGN wallet deposits as the graph reads them where the spec shows a path: the deposit with a
 * stored payment method. Bound once at start-up: to this gateway's own DepositService (service
 * mode) or to the upstream REST v1 deployment (facade mode, facade/upstream-deposits.ts).
 */
export interface DepositsDomain {
  /** Starts a deposit charged to a stored payment method; the caller's Idempotency-Key goes with it. */
  withPaymentMethod(
    caller: Caller,
    input: DepositCommon & { paymentMethodId: string },
    idempotencyKey: string | undefined,
  ): Promise<DepositResult>;
}

/** Deposits as this gateway's own service makes them. */
export const localDeposits = (service: DepositService): DepositsDomain => ({
  withPaymentMethod: ({ principal }, input, idempotencyKey) =>
    service.withPaymentMethod(principal, input, idempotencyKey),
});

import type { Caller } from '../users/user-directory.js';
import type { DepositCommon } from '../wallet/deposit-service.js';
import type { DepositResult } from '../wallet/deposit-result.js';
import type { DepositsDomain } from '../wallet/deposits-domain.js';
import { DepositAnswer } from './deposit-answer.js';
import { koboAt } from './naira-at.js';
import type { FacadeKeys } from './facade-keys.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, bodyOf, credentialOf } from './upstream-json.js';

/** The request body's fields, as the spec lists them; a field left out is not sent. */
const BODY_FIELDS = ['amount', 'paymentMethodId', 'reference', 'currency', 'redirectUrl', 'meta', 'narration'] as const;

/**
 * NGN deposits in a facade: the spec's `POST /api/v1/wallet/deposit/payment-method`, asked with the
 * caller's own credential and Idempotency-Key, sent once under the facade's record of the key
 * (facade-keys.ts: one whose answer did not come is never sent again by the facade). The answer is checked against the spec's deposit result; its amount
 * is read from the digits the upstream wrote into kobo.
 */
export class UpstreamDeposits implements DepositsDomain {
  constructor(
    private readonly upstream: RestV1Upstream,
    /** The facade's record per Idempotency-Key (facade-keys.ts); without it a deposit is simply sent once. */
    private readonly keys?: FacadeKeys,
  ) {}

  async withPaymentMethod(
    caller: Caller,
    input: DepositCommon & { paymentMethodId: string },
    idempotencyKey: string | undefined,
  ): Promise<DepositResult> {
    const body = bodyOf(input, BODY_FIELDS);
    const send = (key: string | undefined) => this.send(caller, body, key);
    if (!this.keys) return send(idempotencyKey);
    return this.keys.run(caller, { operation: 'deposits.withPaymentMethod', key: idempotencyKey, input: body, send });
  }

  private async send(
    caller: Caller,
    body: Record<string, unknown>,
    idempotencyKey: string | undefined,
  ): Promise<DepositResult> {
    const answer = await askUpstream(
      this.upstream,
      {
        method: 'POST',
        path: '/api/v1/wallet/deposit/payment-method',
        credential: credentialOf(caller),
        body,
        idempotencyKey,
      },
      DepositAnswer,
    );
    const data = answer.value.data;
    return {
      amount: koboAt(answer, '/data/amount'),
      reference: data.reference,
      currency: data.currency,
      status: data.status.toLowerCase() as DepositResult['status'],
      customization: data.customization ? { title: data.customization.title ?? null } : null,
      customer: data.customer ?? null,
      accountNumber: data.accountNumber ?? null,
      bankName: data.bankName ?? null,
      accountName: data.accountName ?? null,
      expiresAt: data.expiry_datetime ? new Date(data.expiry_datetime) : null,
      note: data.note ?? null,
      redirectUrl: data.redirectUrl ?? null,
      narration: data.narration ?? null,
      nextAction: data.nextAction ?? null,
    };
  }
}

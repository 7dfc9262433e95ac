/**
 * A deposit as the wallet domain gives it: the spec's deposit result (amounts in kobo), whoever
 * keeps it. A stored row of this gateway is one, and so is a deposit result read from an upstream
 * REST v1 deployment (facade mode). What the spec's deposit result does not give is optional: the
 * graph served in facade mode leaves those fields out (docs/facade.md).
 */
export interface DepositResult {
  /** The face value, in kobo. */
  amount: bigint;
  reference: string;
  currency: string;
  status: 'initiated' | 'pending' | 'completed' | 'failed';
  /** The payer as sent to the provider: `{ email, phoneNumber, name }`. */
  customer: unknown;
  accountNumber: string | null;
  bankName: string | null;
  accountName: string | null;
  /** The spec's `expiry_datetime`. */
  expiresAt: Date | null;
  redirectUrl: string | null;
  narration: string | null;
  /** The provider's next step: `{ type, requires_pin?, requires_otp?, redirect_url?, payment_instruction? }`. */
  nextAction: unknown;
  /**
   * The spec's `customization` and `note` as an upstream gave them. This gateway's own deposits
   * leave them unset: they follow from `method` and `nextAction`.
   */
  customization?: { title: string | null } | null;
  note?: string | null;
  /** This gateway's own (the spec's deposit result has none of these). */
  id?: string;
  method?: string;
  paymentMethodId?: string | null;
  failureReason?: string | null;
  version?: number;
  createdAt?: Date;
  updatedAt?: Date;
}

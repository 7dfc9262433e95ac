import { Type } from '@sinclair/typebox';
import { answerShape, Maybe, NumberAmount, Timestamp } from '../upstream/answer-shape.js';

const Text = Maybe(Type.String());
/** The spec does not show the contents of `redirect_url` and `payment_instruction`: free objects. */
const Free = Maybe(Type.Object({}, { additionalProperties: true }));

/**
 * `POST /api/v1/wallet/deposit/payment-method`: the spec's deposit result in the envelope. The
 * spec does not say which of its fields are required: the facade requires what the graph's
 * Deposit cannot do without (amount, reference, currency, status), and takes the rest as absent
 * or null. `status`: the spec gives `PENDING`; the other three are this gateway's own REST values.
 * `nextAction.requires_pin` and `.requires_otp` are this gateway's too (the spec names the type
 * `requires_pin` only). `amount` is a JSON number of naira, read from its text (upstream-deposits.ts).
 */
export const DepositAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      amount: NumberAmount,
      reference: Type.String({ minLength: 1 }),
      currency: Type.Literal('NGN'),
      customization: Maybe(Type.Object({ title: Text })),
      customer: Maybe(Type.Object({ email: Text, phoneNumber: Text, name: Text })),
      accountNumber: Text,
      bankName: Text,
      accountName: Text,
      expiry_datetime: Maybe(Timestamp),
      note: Text,
      status: Type.Union(['INITIATED', 'PENDING', 'COMPLETED', 'FAILED'].map((s) => Type.Literal(s))),
      redirectUrl: Text,
      narration: Text,
      nextAction: Maybe(
        Type.Object({
          type: Type.String({ minLength: 1 }),
          requires_pin: Free,
          requires_otp: Free,
          redirect_url: Free,
          payment_instruction: Free,
        }),
      ),
    }),
  }),
);

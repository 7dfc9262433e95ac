import { Type } from '@sinclair/typebox';
import { answerShape, DecimalAmount, Maybe, NumberOrString, SafeInteger, Timestamp } from '../upstream/answer-shape.js';

/**
 * The documented shapes of Flutterwave's payments answers (shared/providers.md §1.3; v3 lists from
 * the Node-v3 SDK), as the adapter reads them: the `data` of `{status: "success", data}`, or the
 * whole envelope for the paged v3 lists. Only what the adapter reads is required; everything else
 * Flutterwave sends is allowed and ignored.
 */

/** `POST idp…/token`: an OAuth2 client-credentials token (it lives 600 s). */
export const TOKEN = answerShape(
  Type.Object({ access_token: Type.String({ minLength: 1 }), expires_in: Type.Optional(SafeInteger) }),
);

const Id = Type.String({ minLength: 1 });

/** v4 `POST /payment-methods` (card): the method's id, and the card's public details. */
export const CARD_METHOD = answerShape(
  Type.Object({
    id: Id,
    card: Maybe(
      Type.Object({
        last4: Maybe(Type.String()),
        network: Maybe(Type.String()),
        expiry_month: Maybe(NumberOrString),
      }),
    ),
  }),
);

/** v4 `POST /payment-methods` (ussd), `POST /customers`: only the id is read. */
export const CREATED = answerShape(Type.Object({ id: Id }));

/** v4 charge (`POST /charges`, `PUT /charges/{id}`, `GET /charges/{id}`). */
export const CHARGE = answerShape(
  Type.Object({
    id: Id,
    status: Type.String(),
    reference: Maybe(Type.String()),
    next_action: Maybe(Type.Object({ type: Type.String() })),
    processor_response: Maybe(Type.Object({ type: Maybe(Type.String()), code: Maybe(Type.String()) })),
  }),
);

/** v4 `POST /virtual-accounts` (dynamic or static). */
export const VIRTUAL_ACCOUNT = answerShape(
  Type.Object({
    id: Id,
    account_number: Type.String({ minLength: 1 }),
    account_bank_name: Type.String(),
    account_expiration_datetime: Maybe(Timestamp),
    note: Maybe(Type.String()),
  }),
);

/** v3 `POST /payments` (Standard): the hosted link. */
export const PAYMENT_LINK = answerShape(Type.Object({ link: Type.String({ minLength: 1 }) }));

/** v4 `GET /banks?country=NG`. */
export const BANKS = answerShape(Type.Array(Type.Object({ code: Type.String(), name: Type.String() })));

/** v4 `POST /banks/account-resolve`. */
export const RESOLVED_ACCOUNT = answerShape(Type.Object({ account_name: Type.String() }));

/** v4 `POST /direct-transfers`. */
export const TRANSFER = answerShape(Type.Object({ id: Id, status: Type.String() }));

/** v4 `GET /transfers?reference=`: every transfer under the reference. */
export const TRANSFERS = answerShape(
  Type.Array(Type.Object({ id: Id, status: Type.String(), reference: Type.String() })),
);

/** A v3 list's envelope: `{status, message, meta: {page_info}, data: [...]}`, one row shape per list. */
const v3Page = <R extends ReturnType<typeof Type.Object>>(row: R) =>
  Type.Object({
    data: Type.Array(row),
    meta: Maybe(Type.Object({ page_info: Maybe(Type.Object({ total_pages: Maybe(SafeInteger) })) })),
  });

const listedRow = {
  id: NumberOrString,
  amount: DecimalAmount,
  currency: Maybe(Type.String()),
  status: Type.String(),
  created_at: Timestamp,
};

/** v3 `GET /transactions` (collections), `tx_ref` being the reference the gateway sent. */
export const COLLECTIONS_PAGE = answerShape(v3Page(Type.Object({ ...listedRow, tx_ref: Maybe(Type.String()) })));

/** v3 `GET /transfers` (payouts), `reference` being the one the gateway sent. */
export const TRANSFERS_PAGE = answerShape(v3Page(Type.Object({ ...listedRow, reference: Maybe(Type.String()) })));

/** v3 `GET /settlements`: only each settlement's id is read from the list (its detail is fetched). */
export const SETTLEMENTS_PAGE = answerShape(v3Page(Type.Object({ id: NumberOrString, created_at: Timestamp })));

/** v3 `GET /settlements/{id}`: the batch and its transactions. */
export const SETTLEMENT = answerShape(
  Type.Object({
    data: Type.Object({
      id: NumberOrString,
      status: Type.String(),
      currency: Maybe(Type.String()),
      net_amount: DecimalAmount,
      refund: Maybe(DecimalAmount),
      chargeback: Maybe(DecimalAmount),
      created_at: Timestamp,
      transactions: Maybe(
        Type.Array(
          Type.Object({
            id: NumberOrString,
            tx_ref: Maybe(Type.String()),
            charged_amount: DecimalAmount,
            app_fee: Maybe(DecimalAmount),
            merchant_fee: Maybe(DecimalAmount),
            stampduty_charge: Maybe(DecimalAmount),
            status: Type.String(),
            currency: Maybe(Type.String()),
          }),
        ),
      ),
    }),
  }),
);

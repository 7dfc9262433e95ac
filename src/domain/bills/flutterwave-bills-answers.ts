import { Type } from '@sinclair/typebox';
import { answerShape, DecimalAmount, Maybe, NumberAmount, Timestamp } from '../upstream/answer-shape.js';

/**
 * The documented shapes of Flutterwave's v3 Bills answers (shared/providers.md §1.2), as the
 * adapter reads them: the `data` of `{status: "success", data}`. Only what the adapter reads is
 * required; everything else Flutterwave sends is allowed and ignored.
 */

/** `GET /top-bill-categories?country=NG`. */
export const CATEGORIES = answerShape(
  Type.Array(Type.Object({ code: Type.String(), name: Type.String(), description: Maybe(Type.String()) })),
);

/** `GET /bills/{category}/billers?country=NG`. */
export const BILLERS = answerShape(
  Type.Array(Type.Object({ biller_code: Type.String(), name: Type.String(), short_name: Maybe(Type.String()) })),
);

/** `GET /billers/{biller_code}/items`: `amount` 0 means the customer sets it. */
export const ITEMS = answerShape(
  Type.Array(
    Type.Object({
      item_code: Type.String(),
      biller_code: Type.String(),
      name: Type.String(),
      amount: NumberAmount,
      fee: NumberAmount,
      label_name: Type.String(),
      validity_period: Maybe(Type.Union([Type.String(), Type.Number()])),
    }),
  ),
);

/** `GET /bill-items/{item_code}/validate`: the biller's view of the customer. */
export const VALIDATION = answerShape(
  Type.Object({
    name: Maybe(Type.String()),
    customer: Maybe(Type.String()),
    minimum: Maybe(NumberAmount),
    maximum: Maybe(NumberAmount),
    address: Maybe(Type.String()),
  }),
);

const payment = {
  status: Maybe(Type.String()),
  tx_ref: Maybe(Type.String()),
  recharge_token: Maybe(Type.String()),
  extra: Maybe(Type.String()),
  units: Maybe(Type.String()),
  message: Maybe(Type.String()),
};

/**
 * `GET /bills/{reference}` (or `/status`): a payment as Flutterwave knows it (the token of prepaid
 * electricity in `recharge_token` or `extra`). The whole object is kept as the record's provider data.
 */
export const BILL_STATUS = answerShape(Type.Object(payment));

/**
 * `POST /billers/{biller_code}/items/{item_code}/payment`: as the status, with its `tx_ref`, the
 * payment's own id at Flutterwave, always there.
 */
export const PAYMENT = answerShape(Type.Object({ ...payment, tx_ref: Type.String({ minLength: 1 }) }));

const ListedBill = Type.Object({
  customer_reference: Maybe(Type.String()),
  reference: Maybe(Type.String()),
  tx_ref: Maybe(Type.String()),
  flw_ref: Maybe(Type.String()),
  amount: DecimalAmount,
  currency: Maybe(Type.String()),
  status: Maybe(Type.String()),
  created_at: Maybe(Timestamp),
  transaction_date: Maybe(Timestamp),
});

/** `GET /bills?from=&to=&page=`: rows as `data`, or as `data.transactions` with `page_info` beside them. */
export const BILL_PAGE = answerShape(
  Type.Union([
    Type.Array(ListedBill),
    Type.Object({
      transactions: Type.Array(ListedBill),
      page_info: Maybe(Type.Object({ total_pages: Maybe(Type.Integer({ minimum: 0 })) })),
    }),
  ]),
);

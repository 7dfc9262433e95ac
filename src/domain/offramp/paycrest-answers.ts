import { Type } from '@sinclair/typebox';
import { answerShape, DecimalAmount, Maybe, Timestamp } from '../upstream/answer-shape.js';

/**
 * The documented shapes of Paycrest's Sender API (v1) answers (its OpenAPI document;
 * shared/providers.md §3.2), as the adapter reads them: the `data` of `{status: "success", data}`.
 * Only what the adapter reads is required; everything else Paycrest sends is allowed and ignored.
 */

/** `GET /v1/tokens`: every token on every network Paycrest serves. */
export const TOKENS = answerShape(
  Type.Array(
    Type.Object({
      symbol: Type.String({ minLength: 1 }),
      contractAddress: Type.String(),
      decimals: Type.Integer({ minimum: 0, maximum: 36 }),
      network: Type.String(),
    }),
  ),
);

/** `GET /v1/rates/{token}/{amount}/{fiat}`: one rate, a number per the OpenAPI document, a decimal string from the server. */
export const RATE = answerShape(DecimalAmount);

/** `GET /v1/institutions/{currency}`: banks and mobile-money providers. */
export const INSTITUTIONS = answerShape(
  Type.Array(Type.Object({ name: Type.String(), code: Type.String({ minLength: 1 }), type: Type.String() })),
);

/** `POST /v1/verify-account`: the holder's name, or "OK" for a valid account without one. */
export const VERIFIED_ACCOUNT = answerShape(Type.String());

/** `POST /v1/sender/orders`: where and until when the sender pays. */
export const CREATED_ORDER = answerShape(
  Type.Object({
    id: Type.String({ minLength: 1 }),
    receiveAddress: Type.String({ minLength: 1 }),
    validUntil: Timestamp,
    senderFee: DecimalAmount,
    transactionFee: DecimalAmount,
  }),
);

/** `GET /v1/sender/orders/{id}`. */
export const ORDER = answerShape(Type.Object({ status: Type.String(), txHash: Maybe(Type.String()) }));

/** `GET /v1/sender/orders?page=&pageSize=`: `{total, page, pageSize, orders}`. */
export const ORDER_PAGE = answerShape(
  Type.Object({
    total: Type.Integer({ minimum: 0 }),
    orders: Type.Array(
      Type.Object({
        id: Type.String({ minLength: 1 }),
        amount: DecimalAmount,
        token: Type.String(),
        network: Type.String(),
        status: Type.String(),
        createdAt: Timestamp,
      }),
    ),
  }),
);

import { Type } from '@sinclair/typebox';
import { BILL_TYPES } from '../bills/bills-provider.js';
import { answerShape, Maybe, NumberAmount, Timestamp } from '../upstream/answer-shape.js';

/**
 * The spec's bill answers (Resources: bill transaction record, pagination block, validation
 * result), each in the response envelope. What the graph reads is required; the rest may be
 * absent or null, and extra fields are allowed. Amounts are JSON numbers of naira, read from their
 * text (upstream-bills.ts).
 */
const Record = (stored: boolean) =>
  Type.Object({
    id: Type.String({ minLength: 1 }),
    createdAt: Timestamp,
    // "present in list and lookup responses"; the payment answers leave these three out.
    updatedAt: stored ? Timestamp : Maybe(Timestamp),
    deletedDate: Maybe(Timestamp),
    providerData: Maybe(Type.String()),
    userId: Type.String({ minLength: 1 }),
    reference: Type.String({ minLength: 1 }),
    billerCode: Type.String(),
    itemCode: Type.String(),
    customer: Type.String(),
    amount: NumberAmount,
    type: Type.Union(BILL_TYPES.map((t) => Type.Literal(t))),
    status: Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCESS'), Type.Literal('FAILED')]),
    txRef: Maybe(Type.String()),
    billerName: Type.String(),
    validityPeriod: Maybe(Type.String()),
    metadata: Maybe(Type.String()),
    token: Maybe(Type.String()),
    units: Maybe(Type.String()),
  });

export const StoredRecord = Record(true);
export const PaymentRecord = Record(false);

/** The payment endpoints' answer: the record without updatedAt, deletedDate and providerData. */
export const PaymentAnswer = answerShape(Type.Object({ data: PaymentRecord }));

/** `GET /api/v1/bills/records/reference/{reference}`: one record. */
export const RecordAnswer = answerShape(Type.Object({ data: StoredRecord }));

/** `GET /api/v1/bills/records`: the pagination block. */
export const RecordsAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      bills: Type.Array(StoredRecord),
      page: Type.Integer({ minimum: 1 }),
      limit: Type.Integer({ minimum: 1 }),
      total: Type.Integer({ minimum: 0 }),
      totalPages: Type.Integer({ minimum: 0 }),
      hasNext: Type.Boolean(),
      hasPrev: Type.Boolean(),
    }),
  }),
);

/**
 * `POST /api/v1/bills/validate`: the spec's `data` is a free object; the facade needs what the
 * graph's BillValidation gives, as this gateway's own REST answers it (customerName, the amount
 * limits in naira, the address where the biller has one). Another shape is an upstream fault.
 */
export const ValidationAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      customerName: Type.String(),
      customer: Type.String(),
      billerCode: Type.String(),
      itemCode: Type.String(),
      minimum: NumberAmount,
      maximum: NumberAmount,
      address: Maybe(Type.String()),
    }),
  }),
);

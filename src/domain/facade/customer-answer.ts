import { Type } from '@sinclair/typebox';
import { answerShape, Maybe, Timestamp } from '../upstream/answer-shape.js';

/**
 * `POST /api/v1/customers/{businessId}`: the spec shows neither the answer's body nor the customer
 * record's fields. The facade reads it as this gateway's REST answers it: the envelope with the
 * customer as `data` (id, businessId, name, phone, email, externalRef, status, createdAt,
 * updatedAt). Another shape is an upstream fault.
 */
export const CustomerAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      id: Type.String({ minLength: 1 }),
      businessId: Type.String({ minLength: 1 }),
      name: Type.String(),
      phone: Maybe(Type.String()),
      email: Maybe(Type.String()),
      externalRef: Maybe(Type.String()),
      status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
      createdAt: Timestamp,
      updatedAt: Timestamp,
    }),
  }),
);

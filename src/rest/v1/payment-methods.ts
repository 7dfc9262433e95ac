import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

const FIELDS = 'id type brand last4 expMonth expYear bankCode bankName accountNumber accountName isDefault createdAt';
const PaymentMethodSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Union([Type.Literal('card'), Type.Literal('bank_account')]),
    brand: Nullable(Type.String()),
    last4: Nullable(Type.String()),
    expMonth: Nullable(Type.Integer()),
    expYear: Nullable(Type.Integer()),
    bankCode: Nullable(Type.String()),
    bankName: Nullable(Type.String()),
    accountNumber: Nullable(Type.String()),
    accountName: Nullable(Type.String()),
    isDefault: Type.Boolean(),
    createdAt: DateTimeString,
  },
  { title: 'PaymentMethod' },
);
const IdParam = Type.Object({ id: Type.String() });

export const paymentMethodRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/payment-methods',
    tag: 'Payment methods',
    summary: 'List payment methods',
    operation: `query PaymentMethods { paymentMethods { ${FIELDS} } }`,
    message: 'Payment methods retrieved successfully',
    response: Type.Array(PaymentMethodSchema),
  },
  {
    method: 'POST',
    path: '/api/v1/payment-methods',
    tag: 'Payment methods',
    summary: 'Create a payment method',
    description:
      "A card is sent to the provider's tokenizer; only its token, brand, last four digits and expiry are kept. A bank account is checked by name resolution. The first method becomes the default.",
    operation: `mutation CreatePaymentMethod($input: CreatePaymentMethodInput!) { createPaymentMethod(input: $input) { ${FIELDS} } }`,
    body: Type.Object({
      type: Type.Union([Type.Literal('card'), Type.Literal('bank_account')]),
      card: Type.Optional(
        Type.Object({
          number: Type.String({ minLength: 12, maxLength: 23 }),
          expMonth: Type.Integer(),
          expYear: Type.Integer(),
          cvv: Type.String({ minLength: 3, maxLength: 4 }),
        }),
      ),
      bankAccount: Type.Optional(
        Type.Object({
          bankCode: Type.String({ minLength: 1, maxLength: 10 }),
          accountNumber: Type.String({ minLength: 1, maxLength: 20 }),
        }),
      ),
      makeDefault: Type.Optional(Type.Boolean()),
    }),
    variables: ({ body }) => ({ input: body }),
    message: 'Payment method created successfully',
    response: PaymentMethodSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/payment-methods/:id',
    tag: 'Payment methods',
    summary: 'Get payment method details',
    operation: `query PaymentMethod($id: ID!) { paymentMethod(id: $id) { ${FIELDS} } }`,
    params: IdParam,
    message: 'Payment method retrieved successfully',
    response: PaymentMethodSchema,
  },
  {
    method: 'DELETE',
    path: '/api/v1/payment-methods/:id',
    tag: 'Payment methods',
    summary: 'Delete a payment method',
    operation: `mutation DeletePaymentMethod($id: ID!) { deletePaymentMethod(id: $id) { ${FIELDS} } }`,
    params: IdParam,
    message: 'Payment method deleted successfully',
    response: PaymentMethodSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/payment-methods/:id/default',
    tag: 'Payment methods',
    summary: 'Set the default payment method',
    operation: `mutation SetDefaultPaymentMethod($id: ID!) { setDefaultPaymentMethod(id: $id) { ${FIELDS} } }`,
    params: IdParam,
    status: 200,
    message: 'Default payment method set successfully',
    response: PaymentMethodSchema,
  },
]);

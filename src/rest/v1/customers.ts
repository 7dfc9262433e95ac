import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable, PageOf, PageQuery } from '../schemas.js';

const FIELDS = 'id businessId name phone email externalRef status createdAt updatedAt';
const CustomerSchema = Type.Object(
  {
    id: Type.String(),
    businessId: Type.String(),
    name: Type.String(),
    phone: Nullable(Type.String()),
    email: Nullable(Type.String()),
    externalRef: Nullable(Type.String()),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'BusinessCustomer' },
);
const Business = Type.Object({ businessId: Type.String() });
const BusinessSchema = Type.Object(
  {
    id: Type.String({ description: 'The businessId of the customer routes.' }),
    name: Type.String(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'Business' },
);
const BusinessAndCustomer = Type.Object({ businessId: Type.String(), customerId: Type.String() });
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  phone: Type.String({ maxLength: 20 }),
  email: Type.String({ maxLength: 254 }),
  externalRef: Type.String({ maxLength: 64 }),
};

export const customerRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/businesses',
    tag: 'Customers',
    summary: "List the caller's businesses",
    description:
      'The businesses of the user the credential acts for, oldest first: each `id` is the `businessId` the customer routes take.',
    operation: 'query Businesses { me { businesses { id name createdAt updatedAt } } }',
    result: (data) => (data.me as { businesses: unknown[] }).businesses,
    message: 'Businesses retrieved successfully',
    response: Type.Array(BusinessSchema),
  },
  {
    method: 'POST',
    path: '/api/v1/customers/:businessId',
    tag: 'Customers',
    summary: 'Create a customer under a business',
    description:
      "The seed's body: name, phone, email, externalRef. externalRef is unique within the business (409 when taken).",
    operation: `mutation CreateBusinessCustomer($businessId: ID!, $input: BusinessCustomerInput!) { createBusinessCustomer(businessId: $businessId, input: $input) { ${FIELDS} } }`,
    params: Business,
    body: Type.Object({
      name: Fields.name,
      phone: Type.Optional(Fields.phone),
      email: Type.Optional(Fields.email),
      externalRef: Type.Optional(Fields.externalRef),
    }),
    variables: ({ params, body }) => ({ businessId: params.businessId, input: body }),
    message: 'Customer created successfully',
    response: CustomerSchema,
  },
  {
    method: 'GET',
    path: '/api/v1/customers/:businessId',
    tag: 'Customers',
    summary: "List a business's customers",
    operation: `query BusinessCustomers($businessId: ID!, $status: BusinessCustomerStatus, $page: Int, $limit: Int) {
      businessCustomers(businessId: $businessId, status: $status, page: $page, limit: $limit) { customers { ${FIELDS} } page limit total totalPages hasNext hasPrev } }`,
    params: Business,
    querystring: Type.Object({
      status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')])),
      ...PageQuery(100),
    }),
    variables: ({ params, query }) => ({ businessId: params.businessId, ...query }),
    message: 'Customers retrieved successfully',
    response: PageOf('customers', CustomerSchema, 'BusinessCustomerPage'),
  },
  {
    method: 'GET',
    path: '/api/v1/customers/:businessId/:customerId',
    tag: 'Customers',
    summary: 'Get one customer',
    operation: `query BusinessCustomer($businessId: ID!, $id: ID!) { businessCustomer(businessId: $businessId, id: $id) { ${FIELDS} } }`,
    params: BusinessAndCustomer,
    variables: ({ params }) => ({ businessId: params.businessId, id: params.customerId }),
    message: 'Customer retrieved successfully',
    response: CustomerSchema,
  },
  {
    method: 'PATCH',
    path: '/api/v1/customers/:businessId/:customerId',
    tag: 'Customers',
    summary: 'Update a customer',
    operation: `mutation UpdateBusinessCustomer($businessId: ID!, $id: ID!, $input: BusinessCustomerUpdate!) { updateBusinessCustomer(businessId: $businessId, id: $id, input: $input) { ${FIELDS} } }`,
    params: BusinessAndCustomer,
    body: Type.Object(
      {
        name: Type.Optional(Fields.name),
        phone: Type.Optional(Fields.phone),
        email: Type.Optional(Fields.email),
        externalRef: Type.Optional(Fields.externalRef),
      },
      { minProperties: 1 },
    ),
    variables: ({ params, body }) => ({ businessId: params.businessId, id: params.customerId, input: body }),
    message: 'Customer updated successfully',
    response: CustomerSchema,
  },
  {
    method: 'POST',
    path: '/api/v1/customers/:businessId/:customerId/disable',
    tag: 'Customers',
    summary: 'Disable a customer',
    operation: `mutation DisableBusinessCustomer($businessId: ID!, $id: ID!) { disableBusinessCustomer(businessId: $businessId, id: $id) { ${FIELDS} } }`,
    params: BusinessAndCustomer,
    variables: ({ params }) => ({ businessId: params.businessId, id: params.customerId }),
    status: 200,
    message: 'Customer disabled successfully',
    response: CustomerSchema,
  },
]);

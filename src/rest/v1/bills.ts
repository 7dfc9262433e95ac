import { Type } from '@sinclair/typebox';
import { BILL_TYPES, type BillType as BillKind } from '../../domain/bills/bills-provider.js';
import { RECURRENCE_PATTERNS } from '../../domain/bills/recurrence.js';
import { billPaymentFieldChecks, MAX_RECORDS_PAGE } from '../../domain/bills/bills-service.js';
import { defineRoutes, type RouteInput } from '../route.js';
import { DateFilter, DateTimeString, Nullable, PageOf, PageQuery, pageAndFilter, NairaAmount } from '../schemas.js';
import { renderReceipt } from './bill-receipt.js';

/**
 * REST v1 bills: the seed's paths, and paths beside them for the named operations (listed in the
 * docs/rest-v1.md). Payment answers are the bill record without updatedAt, deletedDate and providerData.
 */
const RECORD_FIELDS =
  'id createdAt updatedAt deletedDate userId reference billerCode itemCode customer amount fee type status providerData txRef billerName customerName validityPeriod metadata token units';
const PAYMENT_FIELDS =
  'id createdAt userId reference billerCode itemCode customer amount fee type status txRef billerName customerName validityPeriod metadata token units';

const BillType = Type.Union(BILL_TYPES.map((t) => Type.Literal(t)));
const BillStatus = Type.Union(['PENDING', 'SUCCESS', 'FAILED'].map((s) => Type.Literal(s)));
const Naira = NairaAmount();
const Reference = Type.String({ minLength: 1, maxLength: 64 });
const ScheduleData = Type.Object({
  executionDate: DateTimeString,
  isRecurring: Type.Optional(Type.Boolean({ default: false })),
  recurrencePattern: Type.Optional(
    Type.Union(
      RECURRENCE_PATTERNS.map((p) => Type.Literal(p)),
      { description: "Africa/Lagos time; monthly on the 29th–31st falls on shorter months' last day." },
    ),
  ),
});
const Common = {
  reference: Type.Optional(Reference),
  isSchedule: Type.Optional(Type.Boolean()),
  scheduleData: Type.Optional(ScheduleData),
  saveBeneficiary: Type.Optional(Type.Boolean({ default: false })),
  beneficiaryName: Type.Optional(Type.String({ maxLength: 60 })),
};

const recordSchema = (withListFields: boolean) =>
  Type.Object(
    {
      id: Type.String(),
      createdAt: DateTimeString,
      ...(withListFields
        ? { updatedAt: DateTimeString, deletedDate: Nullable(DateTimeString), providerData: Nullable(Type.String()) }
        : {}),
      userId: Type.String(),
      reference: Type.String(),
      billerCode: Type.String(),
      itemCode: Type.String(),
      customer: Type.String(),
      amount: Type.Number(),
      fee: Type.Number({ description: 'Charged on top of amount.' }),
      type: BillType,
      status: BillStatus,
      txRef: Nullable(Type.String()),
      billerName: Type.String(),
      customerName: Nullable(Type.String()),
      validityPeriod: Nullable(Type.String()),
      metadata: Nullable(Type.String()),
      token: Nullable(Type.String()),
      units: Nullable(Type.String()),
    },
    { title: withListFields ? 'BillRecord' : 'BillPaymentRecord' },
  );
const BillRecord = recordSchema(true);
const PaymentRecord = recordSchema(false);
const ItemSchema = Type.Object(
  {
    itemCode: Type.String(),
    billerCode: Type.String(),
    name: Type.String(),
    amount: Type.Number(),
    fee: Type.Number(),
    label: Type.String(),
    validityPeriod: Nullable(Type.String()),
  },
  { title: 'BillItem' },
);
/** A schedule as both schedule routes answer it; `skippedRuns` as GraphQL's `SkippedBillRun`. */
const BillScheduleBody = Type.Object(
  {
    id: Type.String(),
    status: Type.String(),
    recurrence: Nullable(Type.String()),
    firstRunAt: DateTimeString,
    nextRunAt: Nullable(DateTimeString),
    runCount: Type.Integer(),
    skippedRuns: Type.Array(
      Type.Object(
        { run: Type.Integer(), reference: Type.String(), reason: Type.String(), at: DateTimeString },
        { title: 'SkippedBillRun' },
      ),
    ),
    payment: Type.Any({ description: 'The payment the schedule makes, as it was asked for.' }),
    createdAt: DateTimeString,
  },
  { title: 'BillSchedule' },
);
const BillerSchema = Type.Object(
  {
    billerCode: Type.String(),
    name: Type.String(),
    shortName: Type.String(),
    category: BillType,
    meterType: Nullable(Type.String()),
  },
  { title: 'Biller' },
);
const BeneficiarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: BillType,
    billerCode: Type.String(),
    billerName: Type.String(),
    customer: Type.String(),
    createdAt: DateTimeString,
  },
  { title: 'BillBeneficiary' },
);
const BILLER_FIELDS = 'billerCode name shortName category meterType';
const ITEM_FIELDS = 'itemCode billerCode name amount fee label validityPeriod';

const payment = (operation: string, field: string, input: string) =>
  `mutation ${operation}($input: ${input}!) { ${field}(input: $input) { ${PAYMENT_FIELDS} } }`;
/** A payment route's field rules: the customer field of its kind of bill is the payment's customer. */
const paymentChecks = (type: BillKind, customerField: string) => (body: Record<string, unknown>) =>
  billPaymentFieldChecks({ ...body, type, customer: body[customerField] as string });
const bodyAsInput = ({ body }: RouteInput) => ({ input: body });
const PAY_DESCRIPTION =
  'Holds amount + fee on the wallet, pays, then captures (SUCCESS) or releases exactly (FAILED); a provider timeout stays PENDING and is settled by polling or the webhook. With isSchedule, scheduleData is required and the money is held when the payment runs. Honours Idempotency-Key.';

export const billRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/bills/categories',
    tag: 'Bills',
    summary: 'Bill categories',
    operation: 'query BillCategories { billCategories { code name description } }',
    message: 'Bill categories retrieved successfully',
    response: Type.Array(
      Type.Object({ code: BillType, name: Type.String(), description: Type.String() }, { title: 'BillCategory' }),
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/categories/:category/billers',
    tag: 'Bills',
    summary: 'Billers of a category',
    operation: `query Billers($category: BillType!) { billers(category: $category) { ${BILLER_FIELDS} } }`,
    params: Type.Object({ category: BillType }),
    message: 'Billers retrieved successfully',
    response: Type.Array(BillerSchema),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/billers/:billerCode/items',
    tag: 'Bills',
    summary: 'Get biller items',
    operation: `query BillerItems($billerCode: String!) { billerItems(billerCode: $billerCode) { ${ITEM_FIELDS} } }`,
    params: Type.Object({ billerCode: Type.String({ minLength: 1, maxLength: 32 }) }),
    message: 'Biller items retrieved successfully',
    response: Type.Array(ItemSchema),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/electricity/billers',
    tag: 'Bills',
    summary: 'List electricity billers',
    operation: `query ElectricityBillers { electricityBillers { ${BILLER_FIELDS} } }`,
    message: 'Electricity billers retrieved successfully',
    response: Type.Array(BillerSchema),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/discos',
    tag: 'Bills',
    summary: 'List DISCOs',
    operation: `query Discos { discos { shortName name prepaid { ${BILLER_FIELDS} } postpaid { ${BILLER_FIELDS} } } }`,
    message: 'DISCOs retrieved successfully',
    response: Type.Array(
      Type.Object(
        {
          shortName: Type.String(),
          name: Type.String(),
          prepaid: Nullable(BillerSchema),
          postpaid: Nullable(BillerSchema),
        },
        { title: 'Disco' },
      ),
    ),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/providers/:provider/items',
    tag: 'Bills',
    summary: 'Items for a provider',
    description: 'A provider by biller code or short name (MTN, DSTV, IKEDC).',
    operation: `query ProviderItems($provider: String!) { providerItems(provider: $provider) { ${ITEM_FIELDS} } }`,
    params: Type.Object({ provider: Type.String({ minLength: 1, maxLength: 32 }) }),
    message: 'Provider items retrieved successfully',
    response: Type.Array(ItemSchema),
  },
  {
    method: 'POST',
    path: '/api/v1/bills/validate',
    tag: 'Bills',
    summary: 'Validate a bill customer',
    operation:
      'mutation ValidateBillCustomer($input: ValidateBillInput!) { validateBillCustomer(input: $input) { customerName customer billerCode itemCode minimum maximum address } }',
    body: Type.Object({
      customer: Type.String({ minLength: 1, maxLength: 32 }),
      billerCode: Type.String({ minLength: 1, maxLength: 32 }),
      itemCode: Type.String({ minLength: 1, maxLength: 32 }),
    }),
    variables: bodyAsInput,
    status: 200,
    message: 'Customer validated successfully',
    response: Type.Object(
      {},
      {
        title: 'BillCustomerValidation',
        additionalProperties: true,
        description: "The biller's validation result: customerName, minimum, maximum, address…",
      },
    ),
  },
  {
    method: 'POST',
    path: '/api/v1/bills/pay/airtime',
    tag: 'Bills',
    summary: 'Pay airtime',
    description: PAY_DESCRIPTION,
    operation: payment('PayAirtime', 'buyAirtime', 'AirtimeInput'),
    body: Type.Object({
      phoneNumber: Type.String({ minLength: 1, maxLength: 20 }),
      biller: Type.String({ minLength: 1, maxLength: 32 }),
      amount: Naira,
      ...Common,
    }),
    fieldChecks: paymentChecks('AIRTIME', 'phoneNumber'),
    variables: bodyAsInput,
    message: 'Airtime payment processed',
    response: PaymentRecord,
  },
  {
    method: 'POST',
    path: '/api/v1/bills/buy-airtime',
    tag: 'Bills',
    summary: 'Buy airtime (with optional schedule)',
    description: PAY_DESCRIPTION,
    operation: payment('BuyAirtime', 'buyAirtime', 'AirtimeInput'),
    body: Type.Object({
      phoneNumber: Type.String({ minLength: 1, maxLength: 20 }),
      biller: Type.String({ minLength: 1, maxLength: 32 }),
      amount: Naira,
      ...Common,
    }),
    fieldChecks: paymentChecks('AIRTIME', 'phoneNumber'),
    variables: bodyAsInput,
    message: 'Airtime purchase processed',
    response: PaymentRecord,
  },
  {
    method: 'POST',
    path: '/api/v1/bills/pay/data',
    tag: 'Bills',
    summary: 'Buy mobile data',
    description: PAY_DESCRIPTION,
    operation: payment('BuyMobileData', 'buyMobileData', 'DataInput'),
    body: Type.Object({
      phoneNumber: Type.String({ minLength: 1, maxLength: 20 }),
      biller: Type.String({ minLength: 1, maxLength: 32 }),
      itemCode: Type.String({ minLength: 1, maxLength: 32 }),
      amount: Type.Optional(Naira),
      ...Common,
    }),
    fieldChecks: paymentChecks('MOBILEDATA', 'phoneNumber'),
    variables: bodyAsInput,
    message: 'Data purchase processed',
    response: PaymentRecord,
  },
  {
    method: 'POST',
    path: '/api/v1/bills/pay/cable',
    tag: 'Bills',
    summary: 'Subscribe cable TV',
    description: PAY_DESCRIPTION,
    operation: payment('SubscribeCableTv', 'subscribeCableTv', 'CableInput'),
    body: Type.Object({
      smartcardNumber: Type.String({ minLength: 1, maxLength: 20 }),
      biller: Type.String({ minLength: 1, maxLength: 32 }),
      itemCode: Type.String({ minLength: 1, maxLength: 32 }),
      amount: Type.Optional(Naira),
      ...Common,
    }),
    fieldChecks: paymentChecks('CABLEBILLS', 'smartcardNumber'),
    variables: bodyAsInput,
    message: 'Cable subscription processed',
    response: PaymentRecord,
  },
  {
    method: 'POST',
    path: '/api/v1/bills/pay/electricity',
    tag: 'Bills',
    summary: 'Buy electricity',
    description: `${PAY_DESCRIPTION} A prepaid meter's token and units are on the record.`,
    operation: payment('PayElectricity', 'payElectricity', 'ElectricityInput'),
    body: Type.Object({
      meterNumber: Type.String({ minLength: 1, maxLength: 20 }),
      amount: Naira,
      disco: Type.String({ minLength: 1, maxLength: 32 }),
      ...Common,
    }),
    fieldChecks: paymentChecks('UTILITYBILLS', 'meterNumber'),
    variables: bodyAsInput,
    message: 'Electricity payment processed',
    response: PaymentRecord,
  },
  {
    method: 'GET',
    path: '/api/v1/bills/records',
    tag: 'Bills',
    summary: 'List bill records',
    operation: `query BillRecords($filter: BillRecordFilter, $page: Int, $limit: Int) {
      billRecords(filter: $filter, page: $page, limit: $limit) { bills { ${RECORD_FIELDS} } page limit total totalPages hasNext hasPrev } }`,
    querystring: Type.Object({
      type: Type.Optional(BillType),
      status: Type.Optional(BillStatus),
      billerName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Partial match.' })),
      billerCode: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
      customer: Type.Optional(
        Type.String({ minLength: 1, maxLength: 32, description: 'Customer reference or phone number.' }),
      ),
      startDate: Type.Optional(DateFilter('Created at or after (a date: from its start).')),
      endDate: Type.Optional(DateFilter('Created on or before a date (inclusive), or before a date-time.')),
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Part of reference or txRef.' })),
      minAmount: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      maxAmount: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      ...PageQuery(MAX_RECORDS_PAGE),
      sortBy: Type.Optional(
        Type.Union([Type.Literal('createdAt'), Type.Literal('amount'), Type.Literal('updatedAt')], {
          default: 'createdAt',
        }),
      ),
      sortOrder: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'DESC' })),
    }),
    variables: pageAndFilter,
    message: 'Bill records retrieved successfully',
    response: PageOf('bills', BillRecord, 'BillRecordPage'),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/records/reference/:reference',
    tag: 'Bills',
    summary: 'A bill record by reference',
    description:
      'Another user\'s or a missing reference answers 404 with {success:false, message, errorCode:"BILL_NOT_FOUND", reference}.',
    operation: `query BillRecord($reference: String!) { billRecord(reference: $reference) { ${RECORD_FIELDS} } }`,
    params: Type.Object({ reference: Type.String({ minLength: 1, maxLength: 80 }) }),
    message: 'Bill record retrieved successfully',
    response: BillRecord,
  },
  {
    method: 'GET',
    path: '/api/v1/bills/records/reference/:reference/receipt',
    tag: 'Bills',
    summary: 'Receipt for a transaction (JSON)',
    operation: `query BillReceipt($reference: String!) { billRecord(reference: $reference) { ${RECORD_FIELDS} } }`,
    params: Type.Object({ reference: Type.String({ minLength: 1, maxLength: 80 }) }),
    message: 'Receipt retrieved successfully',
    response: BillRecord,
  },
  {
    method: 'GET',
    path: '/api/v1/bills/records/reference/:reference/receipt.html',
    tag: 'Bills',
    summary: 'Receipt for a transaction (printable HTML)',
    operation: `query BillReceiptPage($reference: String!) { billRecord(reference: $reference) { ${RECORD_FIELDS} } }`,
    params: Type.Object({ reference: Type.String({ minLength: 1, maxLength: 80 }) }),
    html: (payload) => renderReceipt(payload as Parameters<typeof renderReceipt>[0]),
    message: 'Receipt retrieved successfully',
    response: Type.String(),
  },
  {
    method: 'GET',
    path: '/api/v1/bills/beneficiaries',
    tag: 'Bills',
    summary: 'List saved beneficiaries',
    operation:
      'query BillBeneficiaries { billBeneficiaries { id name type billerCode billerName customer createdAt } }',
    message: 'Beneficiaries retrieved successfully',
    response: Type.Array(BeneficiarySchema),
  },
  {
    method: 'DELETE',
    path: '/api/v1/bills/beneficiaries/:id',
    tag: 'Bills',
    summary: 'Delete a saved beneficiary',
    operation:
      'mutation DeleteBillBeneficiary($id: ID!) { deleteBillBeneficiary(id: $id) { id name type billerCode billerName customer createdAt } }',
    params: Type.Object({ id: Type.String() }),
    message: 'Beneficiary deleted successfully',
    response: BeneficiarySchema,
  },
  {
    method: 'GET',
    path: '/api/v1/bills/schedules',
    tag: 'Bills',
    summary: 'List scheduled payments',
    operation:
      'query BillSchedules { billSchedules { id status recurrence firstRunAt nextRunAt runCount skippedRuns { run reference reason at } payment createdAt } }',
    message: 'Schedules retrieved successfully',
    response: Type.Array(BillScheduleBody),
  },
  {
    method: 'POST',
    path: '/api/v1/bills/schedules/:id/cancel',
    tag: 'Bills',
    summary: 'Cancel a scheduled payment',
    operation:
      'mutation CancelBillSchedule($id: ID!) { cancelBillSchedule(id: $id) { id status recurrence firstRunAt nextRunAt runCount skippedRuns { run reference reason at } payment createdAt } }',
    params: Type.Object({ id: Type.String() }),
    status: 200,
    message: 'Schedule cancelled successfully',
    response: BillScheduleBody,
  },
]);

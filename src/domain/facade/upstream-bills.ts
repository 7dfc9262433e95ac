import type { Static } from '@sinclair/typebox';
import type { BillPaymentInput } from '../bills/bill-catalogue.js';
import type { BillRecord, BillRecordPage } from '../bills/bill-record.js';
import type { BillsDomain } from '../bills/bills-domain.js';
import type { CustomerValidation } from '../bills/bills-provider.js';
import type { RecordFilter } from '../bills/bills-service.js';
import { badInput } from '../errors.js';
import type { Caller, CallerCredential } from '../users/user-directory.js';
import type { FacadeKeys } from './facade-keys.js';
import { koboAt } from './naira-at.js';
import { optionalKoboFrom } from '../wallet/naira.js';
import { PaymentAnswer, type PaymentRecord, RecordAnswer, RecordsAnswer, ValidationAnswer } from './bill-answers.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, credentialOf, type JsonAnswer } from './upstream-json.js';
import { type KeyedMutation, placedRoute, type RouteMap, type UpstreamRoute } from './upstream-routes.js';

type RecordData = Static<typeof PaymentRecord> & { updatedAt?: string | null };

/** The fields of a payment's body, per request: the spec's own, or this gateway's for a named-only one. */
const SPEC_SCHEDULE = ['isSchedule', 'scheduleData', 'saveBeneficiary', 'beneficiaryName'] as const;
const SPEC_ELECTRICITY = ['isSchedule', 'saveBeneficiary', 'beneficiaryName'] as const;
const GATEWAY_PAYMENT = ['reference', 'isSchedule', 'scheduleData', 'saveBeneficiary', 'beneficiaryName'] as const;
type Optional = (typeof GATEWAY_PAYMENT)[number];

/**
 * The bills domain of a facade: each operation is the spec's request to the upstream, asked with
 * the caller's own credential (airtime `POST /api/v1/bills/buy-airtime`, electricity
 * `POST /api/v1/bills/pay/electricity`, validation, the records list and a record by reference),
 * and mobile data and cable TV where the route map places them. Answers are checked against the
 * spec's shapes; amounts are read from their decimal text into kobo, never through a float. A
 * payment is sent once, under the facade's record of its Idempotency-Key (facade-keys.ts): one
 * whose answer did not come is never sent again by the facade.
 */
export class UpstreamBills implements BillsDomain {
  constructor(
    private readonly upstream: RestV1Upstream,
    private readonly routes: RouteMap,
    /** The facade's record per Idempotency-Key; without it a payment is simply sent once. */
    private readonly keys?: FacadeKeys,
  ) {}

  async pay(caller: Caller, input: BillPaymentInput, idempotencyKey: string | undefined): Promise<BillRecord> {
    // Built before anything is recorded: a request the facade refuses itself holds no key.
    const { route, body, operation } = this.paymentRequest(input);
    const credential = credentialOf(caller);
    const send = async (key: string | undefined) => {
      const answer = await askUpstream(
        this.upstream,
        { ...route, credential, body, idempotencyKey: key },
        PaymentAnswer,
      );
      return recordOf(answer, answer.value.data, '/data');
    };
    if (!this.keys) return send(idempotencyKey);
    return this.keys.run(caller, {
      operation,
      key: idempotencyKey,
      input: { type: input.type, ...body },
      match: {
        kind: 'bill',
        type: input.type,
        customer: input.customer,
        amountKobo: amountKoboOf(input.amount),
        reference: typeof body['reference'] === 'string' ? body['reference'] : null,
      },
      referenceOf: (record) => record.reference,
      send,
    });
  }

  async validate(
    caller: Caller,
    input: { customer: string; billerCode: string; itemCode: string },
  ): Promise<CustomerValidation> {
    const answer = await askUpstream(
      this.upstream,
      {
        method: 'POST',
        path: '/api/v1/bills/validate',
        credential: credentialOf(caller),
        body: { customer: input.customer, billerCode: input.billerCode, itemCode: input.itemCode },
      },
      ValidationAnswer,
    );
    const data = answer.value.data;
    return {
      customerName: data.customerName,
      customer: data.customer,
      billerCode: data.billerCode,
      itemCode: data.itemCode,
      minimum: koboAt(answer, '/data/minimum'),
      maximum: koboAt(answer, '/data/maximum'),
      address: data.address ?? null,
    };
  }

  async records(caller: Caller, filter: RecordFilter, page: number, limit: number): Promise<BillRecordPage> {
    return this.recordsWith(credentialOf(caller), filter, page, limit);
  }

  async record(caller: Caller, reference: string): Promise<BillRecord> {
    return this.recordWith(credentialOf(caller), reference);
  }

  /** The records list, asked with a credential kept for the purpose (the matcher's, key-matcher.ts). */
  async recordsWith(
    credential: CallerCredential,
    filter: RecordFilter,
    page: number,
    limit: number,
  ): Promise<BillRecordPage> {
    const answer = await askUpstream(
      this.upstream,
      {
        method: 'GET',
        path: `/api/v1/bills/records?${recordsQuery(filter, page, limit)}`,
        credential,
      },
      RecordsAnswer,
    );
    const { bills, ...block } = answer.value.data;
    return { ...block, bills: bills.map((record, i) => recordOf(answer, record, `/data/bills/${i}`)) };
  }

  /** A record by reference, asked with a credential kept for the purpose (the matcher's, key-matcher.ts). */
  async recordWith(credential: CallerCredential, reference: string): Promise<BillRecord> {
    const answer = await askUpstream(
      this.upstream,
      {
        method: 'GET',
        path: `/api/v1/bills/records/reference/${encodeURIComponent(reference)}`,
        credential,
        asked: { reference },
      },
      RecordAnswer,
    );
    return recordOf(answer, answer.value.data, '/data');
  }

  /** The request a payment is, by its kind of bill. */
  private paymentRequest(input: BillPaymentInput): {
    route: UpstreamRoute;
    body: Record<string, unknown>;
    operation: KeyedMutation;
  } {
    const amount = input.amount === undefined || input.amount === null ? {} : { amount: input.amount };
    switch (input.type) {
      case 'AIRTIME':
        return {
          operation: 'bills.buyAirtime',
          route: { method: 'POST', path: '/api/v1/bills/buy-airtime' },
          body: { phoneNumber: input.customer, biller: input.biller, ...amount, ...optional(input, SPEC_SCHEDULE) },
        };
      case 'UTILITYBILLS':
        return {
          operation: 'bills.payElectricity',
          route: { method: 'POST', path: '/api/v1/bills/pay/electricity' },
          body: { meterNumber: input.customer, ...amount, disco: input.biller, ...optional(input, SPEC_ELECTRICITY) },
        };
      case 'MOBILEDATA':
        return {
          operation: 'bills.buyMobileData',
          route: placedRoute(this.routes, 'bills.buyMobileData', 'buyMobileData'),
          body: {
            phoneNumber: input.customer,
            biller: input.biller,
            itemCode: input.itemCode,
            ...amount,
            ...optional(input, GATEWAY_PAYMENT),
          },
        };
      case 'CABLEBILLS':
        return {
          operation: 'bills.subscribeCableTv',
          route: placedRoute(this.routes, 'bills.subscribeCableTv', 'subscribeCableTv'),
          body: {
            smartcardNumber: input.customer,
            biller: input.biller,
            itemCode: input.itemCode,
            ...amount,
            ...optional(input, GATEWAY_PAYMENT),
          },
        };
    }
  }
}

/**
 * The optional fields of a payment that its request carries. A field given that the request has no
 * room for is refused, naming it, rather than dropped: the caller would think it applied.
 */
function optional(input: BillPaymentInput, allowed: readonly Optional[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of GATEWAY_PAYMENT) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    if (!allowed.includes(field))
      throw badInput(field, `${field} is not taken by the upstream's request for this payment in facade mode.`);
    body[field] = value;
  }
  return body;
}

/** The filter as this gateway's REST names its query parameters (the spec names them by meaning only). */
function recordsQuery(filter: RecordFilter, page: number, limit: number): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'object') query.set(name, value.kind === 'date' ? value.date : value.at.toISOString());
    else query.set(name, String(value));
  }
  query.set('page', String(page));
  query.set('limit', String(limit));
  return query.toString();
}

function recordOf(answer: JsonAnswer<unknown>, data: RecordData, at: string): BillRecord {
  const date = (value: string | null | undefined) => (value ? new Date(value) : null);
  return {
    id: data.id,
    createdAt: new Date(data.createdAt),
    ...(data.updatedAt ? { updatedAt: new Date(data.updatedAt) } : {}),
    ...(data.updatedAt ? { deletedDate: date(data.deletedDate) } : {}),
    ...(data.updatedAt ? { providerDataText: data.providerData ?? null } : {}),
    userId: data.userId,
    reference: data.reference,
    billerCode: data.billerCode,
    itemCode: data.itemCode,
    customer: data.customer,
    amount: koboAt(answer, `${at}/amount`),
    type: data.type,
    status: data.status,
    txRef: data.txRef ?? null,
    billerName: data.billerName,
    validityPeriod: data.validityPeriod ?? null,
    metadata: data.metadata ?? null,
    token: data.token ?? null,
    units: data.units ?? null,
  };
}

/** The amount the matcher compares in kobo; one the facade cannot read is left to the upstream to refuse. */
function amountKoboOf(amount: unknown): string | null {
  try {
    return optionalKoboFrom(amount ?? undefined)?.toString() ?? null;
  } catch {
    return null;
  }
}

import { DomainError } from '../errors.js';
import { type AnswerOf, type AnswerShape, readAnswerPart } from '../upstream/answer-shape.js';
import { requestUpstream } from '../upstream/http.js';
import { type ListWindow, minorUnitsOf, type ProviderRecord, recordStatusOf } from '../reconciliation/records.js';
import { nairaNumber } from '../wallet/naira.js';
import {
  BILL_TYPES,
  type Biller,
  type BillCategory,
  type BillItem,
  type BillOutcome,
  type BillsProvider,
  type BillType,
  type CustomerValidation,
} from './bills-provider.js';
import {
  BILL_PAGE,
  BILL_STATUS,
  BILLERS,
  CATEGORIES,
  ITEMS,
  PAYMENT,
  VALIDATION,
} from './flutterwave-bills-answers.js';

export interface FlutterwaveBillsConfig {
  secretKey: string;
  /** v3 base, e.g. https://api.flutterwave.com/v3 */
  baseUrl: string;
  timeoutMs?: number;
}

interface Envelope {
  status?: string;
  message?: string;
  data: unknown;
}

const FLUTTERWAVE_BILLS = { name: 'flutterwave', label: 'The bills provider' };
/** A listed bill that cannot be read: the same fault as a list answer not in its shape. */
const LIST_FAULT = { upstream: FLUTTERWAVE_BILLS, mutating: false };

const kobo = (naira: unknown) => BigInt(Math.round(Number(naira ?? 0) * 100));

/** Flutterwave's bill statuses: "success"/"successful" settle, "failed" fails, anything else is still pending. */
function outcomeOf(status: string | undefined, data: AnswerOf<typeof BILL_STATUS>, reference: string): BillOutcome {
  const s = (status ?? '').toLowerCase();
  const txRef = data.tx_ref ?? null;
  // The whole answer is kept: what the gateway does not read is still the provider's record.
  const providerData = data as Record<string, unknown>;
  if (['success', 'successful', 'completed'].includes(s)) {
    return {
      status: 'SUCCESS',
      txRef: txRef ?? reference,
      token: data.recharge_token ?? data.extra ?? null,
      units: data.units ?? null,
      providerData,
    };
  }
  if (['failed', 'error', 'reversed'].includes(s))
    return {
      status: 'FAILED',
      txRef,
      reason: data.message ?? 'The biller declined the payment.',
      providerData,
    };
  return { status: 'PENDING', txRef, providerData };
}

/**
 * Flutterwave v3 Bills (`Authorization: Bearer <secret key>`). Every answer's body is read: an
 * HTTP 200 with `status: "error"` is an error, and a success's data is checked against its
 * documented shape (flutterwave-bills-answers.ts). The status lookup accepts both documented paths
 * (`/bills/{reference}` and `/bills/{reference}/status`).
 */
export class FlutterwaveBillsProvider implements BillsProvider {
  readonly name = 'flutterwave';
  constructor(private readonly config: FlutterwaveBillsConfig) {}

  async categories(): Promise<BillCategory[]> {
    const rows = await this.call('GET', '/top-bill-categories?country=NG', CATEGORIES);
    return rows
      .filter((r) => (BILL_TYPES as readonly string[]).includes(r.code))
      .map((r) => ({ code: r.code as BillType, name: r.name, description: r.description ?? r.name }));
  }

  async billers(category: BillType): Promise<Biller[]> {
    const rows = await this.call('GET', `/bills/${category}/billers?country=NG`, BILLERS);
    return rows.map((r) => ({
      billerCode: r.biller_code,
      name: r.name,
      shortName: (r.short_name ?? r.name).toUpperCase(),
      category,
      meterType: category === 'UTILITYBILLS' ? (/postpaid/i.test(r.name) ? 'postpaid' : 'prepaid') : null,
    }));
  }

  async items(billerCode: string): Promise<BillItem[]> {
    const rows = await this.call('GET', `/billers/${encodeURIComponent(billerCode)}/items`, ITEMS);
    return rows.map((r) => ({
      itemCode: r.item_code,
      billerCode: r.biller_code,
      name: r.name,
      amount: kobo(r.amount),
      fee: kobo(r.fee),
      label: r.label_name,
      validityPeriod: r.validity_period ? String(r.validity_period) : null,
    }));
  }

  async validate({
    itemCode,
    billerCode,
    customer,
  }: {
    itemCode: string;
    billerCode: string;
    customer: string;
  }): Promise<CustomerValidation> {
    // Node-v3 sends `code`; the other description only `customer`: both are sent.
    const data = await this.call(
      'GET',
      `/bill-items/${encodeURIComponent(itemCode)}/validate?code=${encodeURIComponent(billerCode)}&customer=${encodeURIComponent(customer)}`,
      VALIDATION,
      undefined,
      'customer',
    );
    return {
      customerName: data.name ?? '',
      customer: data.customer ?? customer,
      billerCode,
      itemCode,
      minimum: kobo(data.minimum ?? 50),
      maximum: data.maximum ? kobo(data.maximum) : 10_000_000_00n,
      address: data.address ?? null,
    };
  }

  async pay({
    billerCode,
    itemCode,
    customer,
    amount,
    reference,
  }: {
    billerCode: string;
    itemCode: string;
    customer: string;
    amount: bigint;
    reference: string;
  }): Promise<BillOutcome> {
    // A failure is classified (upstream/): the service keeps a payment with no clear answer PENDING.
    const data = await this.call(
      'POST',
      `/billers/${encodeURIComponent(billerCode)}/items/${encodeURIComponent(itemCode)}/payment`,
      PAYMENT,
      { country: 'NG', customer_id: customer, amount: nairaNumber(amount), reference },
    );
    // A payment answer with data is accepted; its final state comes from the status endpoint or webhook.
    return outcomeOf(data.status ?? 'pending', data, reference);
  }

  async status(reference: string): Promise<BillOutcome | { status: 'NOT_FOUND' }> {
    const notFound = (error: unknown) => error instanceof DomainError && error.code === 'NOT_FOUND';
    let data: AnswerOf<typeof BILL_STATUS>;
    try {
      data = await this.call('GET', `/bills/${encodeURIComponent(reference)}`, BILL_STATUS);
    } catch (error) {
      if (!notFound(error)) throw error;
      try {
        data = await this.call('GET', `/bills/${encodeURIComponent(reference)}/status`, BILL_STATUS);
      } catch (second) {
        // Neither documented path knows the reference: the payment never reached Flutterwave.
        if (notFound(second)) return { status: 'NOT_FOUND' };
        throw second;
      }
    }
    return outcomeOf(data.status ?? undefined, data, reference);
  }

  /**
   * Reconciliation: v3 `GET /bills?from=&to=&page=` (dates, so a day either side is asked for and
   * rows outside the window dropped). Rows come as `data` or `data.transactions`, pages as
   * `page_info` beside them; `customer_reference` is the reference the gateway sent.
   */
  async listPayments(window: ListWindow): Promise<ProviderRecord[]> {
    const day = (at: Date) => at.toISOString().slice(0, 10);
    const records: ProviderRecord[] = [];
    for (let page = 1; page <= 10_000; page++) {
      const query = new URLSearchParams({
        from: day(new Date(window.from.getTime() - 86_400_000)),
        to: day(new Date(window.to.getTime() + 86_400_000)),
        page: String(page),
      });
      const data = await this.call('GET', `/bills?${query}`, BILL_PAGE);
      const rows = Array.isArray(data) ? data : data.transactions;
      rows.forEach((row, i) => {
        const at = new Date(row.created_at ?? row.transaction_date ?? 0);
        if (at < window.from || at >= window.to) return;
        records.push({
          reference: row.customer_reference ?? row.reference ?? row.tx_ref ?? '',
          providerRef: row.tx_ref ?? row.flw_ref ?? '',
          // An amount naira cannot hold (more than two decimals) is a row not in its documented shape.
          amount: readAnswerPart(LIST_FAULT, Array.isArray(data) ? `/data/${i}` : `/data/transactions/${i}`, () =>
            minorUnitsOf(row.amount),
          ),
          currency: row.currency ?? 'NGN',
          status: recordStatusOf(row.status ?? 'successful'),
          at,
        });
      });
      // Without page_info beside the rows (a bare array), pages run until an empty one.
      const pages = Array.isArray(data) ? Number.POSITIVE_INFINITY : (data.page_info?.total_pages ?? 1);
      if (rows.length === 0 || page >= pages) break;
    }
    return records;
  }

  private call<T>(
    method: 'GET' | 'POST',
    path: string,
    shape: AnswerShape<T>,
    body?: unknown,
    field = 'request',
  ): Promise<T> {
    return requestUpstream(
      {
        upstream: FLUTTERWAVE_BILLS,
        url: `${this.config.baseUrl.replace(/\/$/, '')}${path}`,
        method,
        headers: { authorization: `Bearer ${this.config.secretKey}` },
        body,
        timeoutMs: this.config.timeoutMs ?? 15_000,
        mutating: method === 'POST',
        lookup: method === 'GET',
        what: path.split('?')[0],
      },
      // Every answer's body is read: an HTTP 200 carrying `status: "error"` is an error (the
      // documented gotcha), one carrying neither status is not Flutterwave's format, and a
      // success's data must have its shape (a success with `data: null` does not).
      (status, payload) => {
        const envelope = payload as Envelope;
        if (status < 300 && envelope.status === 'success') return { data: envelope.data, at: '/data' };
        if (status < 300 && envelope.status !== 'error') return { mismatch: '/status' };
        return { message: envelope.message, field };
      },
      shape,
    );
  }
}

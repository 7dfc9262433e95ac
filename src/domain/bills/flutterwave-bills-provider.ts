import { badInput, DomainError } from '../errors.js';
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

export interface FlutterwaveBillsConfig {
  secretKey: string;
  /** v3 base, e.g. https://api.flutterwave.com/v3 */
  baseUrl: string;
  timeoutMs?: number;
}

interface Envelope<T> {
  status?: string;
  message?: string;
  data: T;
}

const kobo = (naira: unknown) => BigInt(Math.round(Number(naira ?? 0) * 100));

/** Flutterwave's bill statuses: "success"/"successful" settle, "failed" fails, anything else is still pending. */
function outcomeOf(status: string | undefined, data: Record<string, unknown>, reference: string): BillOutcome {
  const s = (status ?? '').toLowerCase();
  const txRef = (data['tx_ref'] as string | undefined) ?? null;
  if (['success', 'successful', 'completed'].includes(s)) {
    const token = (data['recharge_token'] as string | undefined) ?? (data['extra'] as string | undefined) ?? null;
    return {
      status: 'SUCCESS',
      txRef: txRef ?? reference,
      token,
      units: (data['units'] as string | undefined) ?? null,
      providerData: data,
    };
  }
  if (['failed', 'error', 'reversed'].includes(s))
    return {
      status: 'FAILED',
      txRef,
      reason: String(data['message'] ?? 'The biller declined the payment.'),
      providerData: data,
    };
  return { status: 'PENDING', txRef, providerData: data };
}

/**
 * Flutterwave v3 Bills (`Authorization: Bearer <secret key>`). Every answer's body is read: an
 * HTTP 200 with `status: "error"` is an error. The status lookup accepts both documented paths
 * (`/bills/{reference}` and `/bills/{reference}/status`).
 */
interface ListedBill {
  customer_reference?: string;
  reference?: string;
  tx_ref?: string;
  flw_ref?: string;
  amount: number | string;
  currency?: string;
  status?: string;
  created_at?: string;
  transaction_date?: string;
}

type ListedBills =
  | ListedBill[]
  | { transactions?: ListedBill[]; page_info?: { total_pages?: number; current_page?: number } };

export class FlutterwaveBillsProvider implements BillsProvider {
  readonly name = 'flutterwave';
  constructor(private readonly config: FlutterwaveBillsConfig) {}

  async categories(): Promise<BillCategory[]> {
    const rows = await this.call<Array<{ code: string; name: string; description?: string }>>(
      'GET',
      '/top-bill-categories?country=NG',
    );
    return rows
      .filter((r) => (BILL_TYPES as readonly string[]).includes(r.code))
      .map((r) => ({ code: r.code as BillType, name: r.name, description: r.description ?? r.name }));
  }

  async billers(category: BillType): Promise<Biller[]> {
    const rows = await this.call<Array<{ biller_code: string; name: string; short_name?: string }>>(
      'GET',
      `/bills/${category}/billers?country=NG`,
    );
    return rows.map((r) => ({
      billerCode: r.biller_code,
      name: r.name,
      shortName: (r.short_name ?? r.name).toUpperCase(),
      category,
      meterType: category === 'UTILITYBILLS' ? (/postpaid/i.test(r.name) ? 'postpaid' : 'prepaid') : null,
    }));
  }

  async items(billerCode: string): Promise<BillItem[]> {
    const rows = await this.call<
      Array<{
        item_code: string;
        biller_code: string;
        name: string;
        amount: number;
        fee: number;
        label_name: string;
        validity_period?: string | number | null;
      }>
    >('GET', `/billers/${encodeURIComponent(billerCode)}/items`);
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
    const data = await this.call<{
      name?: string;
      customer: string;
      minimum?: number;
      maximum?: number;
      address?: string | null;
    }>(
      'GET',
      `/bill-items/${encodeURIComponent(itemCode)}/validate?code=${encodeURIComponent(billerCode)}&customer=${encodeURIComponent(customer)}`,
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
    let data: Record<string, unknown>;
    try {
      data = await this.call<Record<string, unknown>>(
        'POST',
        `/billers/${encodeURIComponent(billerCode)}/items/${encodeURIComponent(itemCode)}/payment`,
        {
          country: 'NG',
          customer_id: customer,
          amount: nairaNumber(amount),
          reference,
        },
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'SERVICE_UNAVAILABLE')
        return { status: 'PENDING', txRef: null, providerData: { error: error.message } };
      throw error;
    }
    // A payment answer with data is accepted; its final state comes from the status endpoint or webhook.
    return outcomeOf((data['status'] as string | undefined) ?? 'pending', data, reference);
  }

  async status(reference: string): Promise<BillOutcome | { status: 'NOT_FOUND' }> {
    const notFound = (error: unknown) => error instanceof DomainError && error.code === 'NOT_FOUND';
    let data: Record<string, unknown>;
    try {
      data = await this.call<Record<string, unknown>>('GET', `/bills/${encodeURIComponent(reference)}`);
    } catch (error) {
      if (!notFound(error)) throw error;
      try {
        data = await this.call<Record<string, unknown>>('GET', `/bills/${encodeURIComponent(reference)}/status`);
      } catch (second) {
        // Neither documented path knows the reference: the payment never reached Flutterwave.
        if (notFound(second)) return { status: 'NOT_FOUND' };
        throw second;
      }
    }
    return outcomeOf(data['status'] as string | undefined, data, reference);
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
      const data = await this.call<ListedBills>('GET', `/bills?${query}`);
      const rows = Array.isArray(data) ? data : (data.transactions ?? []);
      for (const row of rows) {
        const at = new Date(row.created_at ?? row.transaction_date ?? 0);
        if (at < window.from || at >= window.to) continue;
        records.push({
          reference: row.customer_reference ?? row.reference ?? row.tx_ref ?? '',
          providerRef: row.tx_ref ?? row.flw_ref ?? '',
          amount: minorUnitsOf(row.amount),
          currency: row.currency ?? 'NGN',
          status: recordStatusOf(row.status ?? 'successful'),
          at,
        });
      }
      // Without page_info beside the rows (a bare array), pages run until an empty one.
      const pages = Array.isArray(data) ? Number.POSITIVE_INFINITY : (data.page_info?.total_pages ?? 1);
      if (rows.length === 0 || page >= pages) break;
    }
    return records;
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, field = 'request'): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.config.baseUrl.replace(/\/$/, '')}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.config.secretKey}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 15_000),
      });
    } catch (cause) {
      throw new DomainError('SERVICE_UNAVAILABLE', 'The bills provider did not answer in time.', { cause });
    }
    const payload = (await response.json().catch(() => undefined)) as Envelope<T> | undefined;
    if (response.ok && payload?.status === 'success' && payload.data !== null && payload.data !== undefined)
      return payload.data;
    if (response.status >= 500 || !payload)
      throw new DomainError('SERVICE_UNAVAILABLE', `The bills provider is unavailable (HTTP ${response.status}).`);
    if (response.status === 401 || response.status === 403)
      throw new DomainError('SERVICE_UNAVAILABLE', "The bills provider refused the gateway's credentials.");
    if (response.status === 404 && method === 'GET')
      throw new DomainError('NOT_FOUND', `The bills provider does not know ${path.split('?')[0]}.`);
    throw badInput(field, `The bills provider refused ${field}: ${payload.message ?? 'unknown error'}`);
  }
}

import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { badInput } from '../errors.js';
import { checkFields, checkFieldsAwaiting, requiredText } from '../field-checks.js';
import { ReferenceCache } from '../reference-cache.js';
import { optionalKoboFrom } from '../wallet/naira.js';
import { type Biller, type BillItem, type BillsProvider, type BillType, BILL_TYPES } from './bills-provider.js';

const CATALOGUE_TTL_MS = 3600_000;

export interface BillPaymentInput {
  type: BillType;
  /** A biller code (BIL099) or its short name (MTN, IKEDC). */
  biller: string;
  /** The item (bundle, plan); optional where the biller has one item (airtime, electricity). */
  itemCode?: string | null;
  customer: string;
  /** Naira; required unless the item has a fixed price. */
  amount?: unknown;
  reference?: string | null;
  isSchedule?: boolean | null;
  scheduleData?: { executionDate?: unknown; isRecurring?: boolean | null; recurrencePattern?: string | null } | null;
  saveBeneficiary?: boolean | null;
  beneficiaryName?: string | null;
}

/** A payment resolved against the catalogue, ready to run now or at a schedule's time. */
export interface ResolvedPayment {
  type: BillType;
  billerCode: string;
  billerName: string;
  itemCode: string;
  customer: string;
  customerName: string | null;
  amount: string;
  fee: string;
  validityPeriod: string | null;
}

/**
 * The bills catalogue (categories, billers, items; cached an hour per environment), customer
 * validation, and a payment request checked and resolved against them.
 */
export class BillCatalogue {
  private readonly catalogue = new ReferenceCache(CATALOGUE_TTL_MS);

  constructor(private readonly providerFor: (environment: Environment) => BillsProvider) {}

  categories(principal: Principal) {
    return this.catalogue.get(`${principal.environment}:categories`, () =>
      this.providerFor(principal.environment).categories(),
    );
  }

  billers(principal: Principal, category: BillType): Promise<Biller[]> {
    if (!BILL_TYPES.includes(category)) throw badInput('category', `category must be one of ${BILL_TYPES.join(', ')}.`);
    return this.catalogue.get(`${principal.environment}:billers:${category}`, () =>
      this.providerFor(principal.environment).billers(category),
    );
  }

  items(principal: Principal, billerCode: string): Promise<BillItem[]> {
    return this.catalogue.get(`${principal.environment}:items:${billerCode}`, () =>
      this.providerFor(principal.environment).items(billerCode),
    );
  }

  /** Electricity billers (prepaid and postpaid). */
  electricityBillers(principal: Principal) {
    return this.billers(principal, 'UTILITYBILLS');
  }

  /** The distribution companies: one entry per DISCO, with its prepaid and postpaid billers. */
  async discos(principal: Principal) {
    const billers = await this.electricityBillers(principal);
    const byDisco = new Map<
      string,
      { shortName: string; name: string; prepaid: Biller | null; postpaid: Biller | null }
    >();
    for (const b of billers) {
      const shortName = b.shortName.replace(/-POSTPAID$/, '');
      const entry = byDisco.get(shortName) ?? {
        shortName,
        name: b.name.replace(/ (Prepaid|Postpaid)$/, ''),
        prepaid: null,
        postpaid: null,
      };
      if (b.meterType === 'postpaid') entry.postpaid = b;
      else entry.prepaid = b;
      byDisco.set(shortName, entry);
    }
    return [...byDisco.values()];
  }

  /** A provider's items by its code or short name ("items for a provider"). */
  async providerItems(principal: Principal, provider: string) {
    const biller = await this.resolveBiller(principal, provider, undefined, 'provider');
    return this.items(principal, biller.billerCode);
  }

  async validate(principal: Principal, input: { customer: string; billerCode: string; itemCode: string }) {
    const required = (field: 'customer' | 'billerCode' | 'itemCode') => () =>
      requiredText(typeof input[field] === 'string' ? input[field] : '', field, `${field} is required.`);
    const fields = checkFields({
      customer: required('customer'),
      billerCode: required('billerCode'),
      itemCode: required('itemCode'),
    });
    return this.providerFor(principal.environment).validate(fields);
  }

  async resolveBiller(principal: Principal, given: string, type: BillType | undefined, field: string): Promise<Biller> {
    const wanted = given.trim().toUpperCase();
    if (!wanted) throw badInput(field, `${field} is required: a biller code or short name.`);
    const categories = type ? [type] : [...BILL_TYPES];
    for (const category of categories) {
      const found = (await this.billers(principal, category)).find(
        (b) => b.billerCode.toUpperCase() === wanted || b.shortName.toUpperCase() === wanted,
      );
      if (found) return found;
    }
    throw badInput(
      field,
      `${field} ${JSON.stringify(given)} is not a known ${type ? `${type} ` : ''}biller; list them with the billers.`,
    );
  }

  async resolvePayment(principal: Principal, input: BillPaymentInput): Promise<ResolvedPayment> {
    const field = input.type === 'UTILITYBILLS' ? 'disco' : 'biller';
    // What can be checked without the biller's items is checked together: one refusal names each.
    const { customer, biller, givenAmount } = await checkFieldsAwaiting({
      customer: () => billCustomer(input.type, input.customer),
      biller: () => this.resolveBiller(principal, input.biller ?? '', input.type, field),
      givenAmount: () => optionalKoboFrom(input.amount),
    });
    const items = await this.items(principal, biller.billerCode);
    const item = input.itemCode
      ? items.find((i) => i.itemCode === input.itemCode)
      : items.length === 1
        ? items[0]
        : undefined;
    if (!item) {
      throw badInput(
        'itemCode',
        input.itemCode
          ? `itemCode ${JSON.stringify(input.itemCode)} is not an item of ${biller.name}.`
          : `itemCode is required for ${biller.name}: ${items.map((i) => i.itemCode).join(', ')}.`,
      );
    }
    let amount: bigint;
    if (item.amount > 0n) {
      if (givenAmount !== undefined && givenAmount !== item.amount) {
        throw badInput('amount', `amount must be ${Number(item.amount) / 100} for ${item.name} (or omitted).`);
      }
      amount = item.amount;
    } else {
      if (givenAmount === undefined) throw badInput('amount', 'amount is required.');
      amount = givenAmount;
    }
    // Electricity and cable customers are checked with the biller first: the name goes on the record.
    let customerName: string | null = null;
    if (input.type === 'UTILITYBILLS' || input.type === 'CABLEBILLS') {
      const validation = await this.providerFor(principal.environment).validate({
        itemCode: item.itemCode,
        billerCode: biller.billerCode,
        customer,
      });
      if (amount < validation.minimum || amount > validation.maximum) {
        throw badInput(
          'amount',
          `amount must be between ${Number(validation.minimum) / 100} and ${Number(validation.maximum) / 100} for this biller.`,
        );
      }
      customerName = validation.customerName;
    } else if (amount < 5_000n) {
      throw badInput('amount', 'amount must be at least 50 naira.');
    }
    return {
      type: input.type,
      billerCode: biller.billerCode,
      billerName: biller.name,
      itemCode: item.itemCode,
      customer,
      customerName,
      amount: amount.toString(),
      fee: item.fee.toString(),
      validityPeriod: item.validityPeriod,
    };
  }
}

/** The input field that names a bill's customer, by kind of bill. */
const CUSTOMER_FIELD: Record<BillType, string> = {
  AIRTIME: 'phoneNumber',
  MOBILEDATA: 'phoneNumber',
  CABLEBILLS: 'smartcardNumber',
  UTILITYBILLS: 'meterNumber',
};

/** The customer a bill is paid for (a phone, meter or smartcard number), checked for its kind of bill. */
export function billCustomer(type: BillType, given: unknown): string {
  const field = CUSTOMER_FIELD[type];
  const customer = typeof given === 'string' ? given.trim() : '';
  if (!customer) throw badInput(field, `${field} is required.`);
  if ((type === 'AIRTIME' || type === 'MOBILEDATA') && !/^(\+?234|0)[789]\d{9}$/.test(customer))
    throw badInput(field, `${field} must be a Nigerian mobile number such as 08031234567.`);
  if (type === 'UTILITYBILLS' && !/^\d{6,13}$/.test(customer))
    throw badInput(field, `${field} must be 6 to 13 digits.`);
  if (type === 'CABLEBILLS' && !/^\d{8,12}$/.test(customer)) throw badInput(field, `${field} must be 8 to 12 digits.`);
  return customer;
}

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { badInput, DomainError } from '../errors.js';
import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import type {
  Biller,
  BillCategory,
  BillItem,
  BillOutcome,
  BillsProvider,
  BillType,
  CustomerValidation,
} from './bills-provider.js';

/** Magic values of the sandbox bills provider. */
export const SANDBOX_BILLS = {
  /** Validation does not find this customer (any biller). */
  invalidCustomer: '00000000000',
  /** A payment for this customer fails; the held money returns. */
  failingCustomer: '08000000001',
  /** A payment for this customer times out: PENDING, then the status poll reports SUCCESS. */
  delayedCustomer: '08000000009',
};

const CATEGORIES: BillCategory[] = [
  { code: 'AIRTIME', name: 'Airtime', description: 'Mobile airtime top-up' },
  { code: 'MOBILEDATA', name: 'Mobile data', description: 'Data bundles' },
  { code: 'CABLEBILLS', name: 'Cable TV', description: 'Cable and satellite subscriptions' },
  { code: 'UTILITYBILLS', name: 'Electricity', description: 'Electricity tokens and bills (DISCOs)' },
];

const biller = (
  billerCode: string,
  name: string,
  shortName: string,
  category: BillType,
  meterType: Biller['meterType'] = null,
): Biller => ({ billerCode, name, shortName, category, meterType });

const DISCOS: Array<[string, string]> = [
  ['IKEDC', 'Ikeja Electric'],
  ['EKEDC', 'Eko Electricity'],
  ['AEDC', 'Abuja Electricity'],
  ['IBEDC', 'Ibadan Electricity'],
  ['EEDC', 'Enugu Electricity'],
  ['PHED', 'Port Harcourt Electricity'],
  ['KEDCO', 'Kano Electricity'],
  ['JED', 'Jos Electricity'],
  ['KAEDCO', 'Kaduna Electric'],
  ['BEDC', 'Benin Electricity'],
  ['YEDC', 'Yola Electricity'],
];

const BILLERS: Biller[] = [
  biller('BIL099', 'MTN Airtime', 'MTN', 'AIRTIME'),
  biller('BIL100', 'Airtel Airtime', 'AIRTEL', 'AIRTIME'),
  biller('BIL102', 'Glo Airtime', 'GLO', 'AIRTIME'),
  biller('BIL103', '9mobile Airtime', '9MOBILE', 'AIRTIME'),
  biller('BIL104', 'MTN Data', 'MTN-DATA', 'MOBILEDATA'),
  biller('BIL105', 'Airtel Data', 'AIRTEL-DATA', 'MOBILEDATA'),
  biller('BIL106', 'Glo Data', 'GLO-DATA', 'MOBILEDATA'),
  biller('BIL107', '9mobile Data', '9MOBILE-DATA', 'MOBILEDATA'),
  biller('BIL119', 'DStv', 'DSTV', 'CABLEBILLS'),
  biller('BIL120', 'GOtv', 'GOTV', 'CABLEBILLS'),
  biller('BIL123', 'StarTimes', 'STARTIMES', 'CABLEBILLS'),
  ...DISCOS.flatMap(([short, name], i) => [
    biller(`BIL${200 + i * 2}`, `${name} Prepaid`, short, 'UTILITYBILLS', 'prepaid'),
    biller(`BIL${201 + i * 2}`, `${name} Postpaid`, `${short}-POSTPAID`, 'UTILITYBILLS', 'postpaid'),
  ]),
];

const naira = (n: number) => BigInt(Math.round(n * 100));
const item = (
  itemCode: string,
  billerCode: string,
  name: string,
  amount: number,
  fee: number,
  label: string,
  validityPeriod: string | null = null,
): BillItem => ({
  itemCode,
  billerCode,
  name,
  amount: naira(amount),
  fee: naira(fee),
  label,
  validityPeriod,
});

function itemsOf(b: Biller): BillItem[] {
  switch (b.category) {
    case 'AIRTIME':
      return [item(`AT${b.billerCode.slice(3)}`, b.billerCode, `${b.name}`, 0, 0, 'Mobile Number')];
    case 'MOBILEDATA':
      return [
        item(`MD${b.billerCode.slice(3)}1`, b.billerCode, `${b.name} 1GB`, 300, 0, 'Mobile Number', '1 day'),
        item(`MD${b.billerCode.slice(3)}7`, b.billerCode, `${b.name} 6GB`, 2500, 0, 'Mobile Number', '7 days'),
        item(`MD${b.billerCode.slice(3)}30`, b.billerCode, `${b.name} 20GB`, 5500, 0, 'Mobile Number', '30 days'),
      ];
    case 'CABLEBILLS': {
      const plans: Record<string, Array<[string, number]>> = {
        DSTV: [
          ['Padi', 3600],
          ['Yanga', 5100],
          ['Compact', 15700],
          ['Premium', 37000],
        ],
        GOTV: [
          ['Smallie', 1575],
          ['Jinja', 3300],
          ['Max', 8500],
        ],
        STARTIMES: [
          ['Nova', 1900],
          ['Basic', 3700],
          ['Classic', 5500],
        ],
      };
      return (plans[b.shortName] ?? []).map(([plan, price], i) =>
        item(
          `CB${b.billerCode.slice(3)}${i + 1}`,
          b.billerCode,
          `${b.name} ${plan}`,
          price,
          100,
          'Smartcard Number',
          '30 days',
        ),
      );
    }
    default:
      return [item(`UB${b.billerCode.slice(3)}`, b.billerCode, b.name, 0, 100, 'Meter Number')];
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

interface ReceivedPayment {
  status: BillOutcome['status'];
  billerCode: string;
  txRef: string;
  amount: bigint;
  outcome: BillOutcome;
  at: Date;
}

/** Deterministic and in-process: outcomes depend only on the request (and the magic values). */
export class SandboxBillsProvider implements BillsProvider {
  readonly name = 'sandbox';
  /**
   * Payments this process received, by reference: what a status query answers. Bounded: sandbox
   * keys pay in production processes too, and a map of every payment ever made only grows. A
   * status poll comes within minutes of its payment, long before 100,000 newer ones push it out.
   */
  private memory: LRUCache<string, ReceivedPayment> | undefined;
  private readonly remember: number;

  constructor(options: { remember?: number } = {}) {
    this.remember = options.remember ?? 100_000;
  }

  /**
   * Made on the first payment: lru-cache allocates its 100,000 slots up front, about 0.1 s of
   * every start (docs/benchmarks.md, "Footprint and start"), for processes that may never pay a
   * sandbox bill.
   */
  private get received(): LRUCache<string, ReceivedPayment> {
    this.memory ??= new LRUCache({ max: this.remember });
    return this.memory;
  }

  /** Reconciliation: what this process received (per process, like the status answers). */
  async listPayments(window: ListWindow): Promise<ProviderRecord[]> {
    return [...this.received.entries()]
      .filter(([, r]) => r.at.getTime() >= window.from.getTime() && r.at.getTime() < window.to.getTime())
      .map(([reference, r]) => ({
        reference,
        providerRef: r.txRef,
        amount: r.amount,
        currency: 'NGN',
        // A delayed payment has gone through by the time anyone asks (as `status` answers).
        status: r.status === 'FAILED' ? 'failed' : 'succeeded',
        at: r.at,
      }));
  }

  async categories(): Promise<BillCategory[]> {
    return CATEGORIES;
  }

  async billers(category: BillType): Promise<Biller[]> {
    return BILLERS.filter((b) => b.category === category);
  }

  async items(billerCode: string): Promise<BillItem[]> {
    const found = BILLERS.find((b) => b.billerCode === billerCode);
    if (!found) throw new DomainError('NOT_FOUND', `Biller ${JSON.stringify(billerCode)} was not found.`);
    return itemsOf(found);
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
    const items = await this.items(billerCode).catch(() => {
      throw badInput('billerCode', `billerCode ${JSON.stringify(billerCode)} is not a known biller.`);
    });
    const found = items.find((i) => i.itemCode === itemCode);
    if (!found) throw badInput('itemCode', `itemCode ${JSON.stringify(itemCode)} is not an item of ${billerCode}.`);
    if (customer === SANDBOX_BILLS.invalidCustomer)
      throw badInput('customer', `customer ${customer} was not found by the biller.`);
    const names = ['ADEBAYO OKAFOR', 'CHIOMA BELLO', 'EMEKA ADEYEMI', 'FATIMA NWOSU'];
    return {
      customerName: names[Number.parseInt(digest(customer).slice(0, 2), 16) % names.length]!,
      customer,
      billerCode,
      itemCode,
      minimum: found.amount > 0n ? found.amount : 5_000n,
      maximum: found.amount > 0n ? found.amount : 10_000_000n,
      address: found.label === 'Meter Number' ? '12 Admiralty Way, Lekki, Lagos' : null,
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
    // A repeated reference is the same payment (as a provider dedupes by reference).
    const known = this.received.get(reference);
    if (known) return known.outcome;
    const txRef = `SBX-FLYAPI-${digest(reference).slice(0, 12).toUpperCase()}`;
    const providerData = { billerCode, itemCode, customer, amount: Number(amount) / 100, reference, txRef };
    const outcome: BillOutcome =
      customer === SANDBOX_BILLS.failingCustomer
        ? { status: 'FAILED', txRef, reason: 'The biller declined the payment.', providerData }
        : customer === SANDBOX_BILLS.delayedCustomer
          ? { status: 'PENDING', txRef: null, providerData }
          : this.success(billerCode, txRef, amount, providerData);
    this.received.set(reference, { status: outcome.status, billerCode, txRef, amount, outcome, at: new Date() });
    return outcome;
  }

  async status(reference: string): Promise<BillOutcome | { status: 'NOT_FOUND' }> {
    const received = this.received.get(reference);
    if (!received) return { status: 'NOT_FOUND' };
    // A delayed payment has gone through by the time anyone asks.
    return received.status === 'PENDING'
      ? this.success(received.billerCode, received.txRef, received.amount, {
          reference,
          txRef: received.txRef,
          settledBy: 'status',
        })
      : received.outcome;
  }

  private success(
    billerCode: string,
    txRef: string,
    amount: bigint,
    providerData: Record<string, unknown>,
  ): BillOutcome {
    const found = BILLERS.find((b) => b.billerCode === billerCode);
    if (found?.meterType === 'prepaid') {
      const digits = BigInt(`0x${digest(txRef).slice(0, 15)}`)
        .toString()
        .padStart(20, '0')
        .slice(0, 20);
      const token = digits.match(/.{4}/g)!.join('-');
      // ₦75 per kWh in the sandbox.
      const units = `${(Number(amount) / 100 / 75).toFixed(1)} kWh`;
      return {
        status: 'SUCCESS',
        txRef,
        token,
        units,
        providerData: { ...providerData, recharge_token: token, units },
      };
    }
    return { status: 'SUCCESS', txRef, token: null, units: null, providerData };
  }
}

import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { badInput, DomainError } from '../errors.js';
import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import type {
  Authorization,
  Bank,
  CardDetails,
  CardToken,
  ChargeState,
  Customer,
  NextAction,
  PayInAccount,
  PaymentsProvider,
  TransferState,
} from './payments-provider.js';
import { generate } from '../upstream/upstream-error.js';

/**
 * Magic values of the sandbox payments provider. Card numbers never leave the tokenizer: the
 * token names the scenario, and only the token is stored.
 */
export const SANDBOX_PAYMENTS = {
  cards: {
    /** Needs PIN 3310, then OTP 12345 (Flutterwave's documented test card). */
    pinThenOtp: '5531886652142950',
    /** Needs 3D Secure: the deposit answers with a redirect_url; authorize with type 3ds. */
    threeDs: '4187427415564246',
    /** Succeeds at once, no authorization. */
    noAuth: '5060990580000217499',
    /** Declined by the issuer. */
    declined: '4000000000000002',
  },
  pin: '3310',
  otp: '12345',
  /** Seconds after which a bank transfer, USSD or payment-link deposit arrives. */
  arrivalSeconds: 60,
  /** A bank-transfer deposit of exactly this many kobo never arrives, and expires. */
  neverArrivesKobo: 66_600n,
  /** Minutes a one-off transfer account stays valid. */
  transferAccountMinutes: 30,
  payouts: {
    /** A payout to this account fails; the held money returns to the wallet. */
    failingAccount: '0000000000',
    /** A payout to this account times out; reconciliation later finds it succeeded. */
    timeoutAccount: '9999999999',
    /** A payout to this account takes three seconds (to see a concurrent retry answered 409). */
    slowAccount: '8888888888',
  },
  /** Account resolution: this number is not found. */
  unknownAccount: '1111111111',
  /** Flutterwave's documented test account: bank 044, 0690000040 → "Alexis Sanchez". */
  knownAccount: { bankCode: '044', accountNumber: '0690000040', accountName: 'Alexis Sanchez' },
};

const BANKS: Bank[] = [
  { code: '044', name: 'Access Bank' },
  { code: '011', name: 'First Bank of Nigeria' },
  { code: '058', name: 'Guaranty Trust Bank' },
  { code: '50211', name: 'Kuda Microfinance Bank' },
  { code: '999992', name: 'OPay' },
  { code: '033', name: 'United Bank for Africa' },
  { code: '057', name: 'Zenith Bank' },
];

type Scenario = 'pinThenOtp' | 'threeDs' | 'noAuth' | 'declined';

const luhnValid = (digits: string) =>
  digits
    .split('')
    .reverse()
    .reduce((sum, d, i) => {
      let n = Number(d);
      if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
      return sum + n;
    }, 0) %
    10 ===
  0;

const brandOf = (number: string) =>
  number.startsWith('4') ? 'visa' : number.startsWith('5') ? 'mastercard' : number.startsWith('506') ? 'verve' : 'card';

/** Deterministic, stateless: a charge's reference carries its scenario, so any instance can continue it. */
export class SandboxPaymentsProvider implements PaymentsProvider {
  readonly name = 'sandbox';
  /** Sandbox transfers by reference: what the "provider" would report when asked later. */
  private readonly transfers = new Map<string, TransferState>();
  /**
   * Sandbox charges by the gateway's reference (a second charge under one reference is the first,
   * as a real provider dedupes it) and their latest state by provider reference, for `chargeStatus`.
   * Per process: a charge another process made is known by its scenario only.
   */
  private readonly charges = new Map<string, ChargeState>();
  private readonly chargeStates = new Map<string, ChargeState>();
  /**
   * What this sandbox did, as a provider's own books would list it for reconciliation: card
   * charges and transfers. Per process (a restart forgets them); arrivals into accounts are
   * simulated by the gateway itself and are not here.
   */
  readonly recorded: { collections: ProviderRecord[]; transfers: ProviderRecord[] } = {
    collections: [],
    transfers: [],
  };

  constructor(private readonly clock: Clock) {}

  /** A transfer, USSD or payment-link payer pays after `arrivalSeconds`; a card pays at once; one magic amount never arrives. */
  simulatedArrivalMs(deposit: { method: string; amount: bigint }): number | undefined {
    if (deposit.method === 'card' || deposit.amount === SANDBOX_PAYMENTS.neverArrivesKobo) return undefined;
    return SANDBOX_PAYMENTS.arrivalSeconds * 1000;
  }

  async listCollections(window: ListWindow): Promise<ProviderRecord[]> {
    return this.recorded.collections.filter((r) => within(r, window));
  }

  async listTransfers(window: ListWindow): Promise<ProviderRecord[]> {
    return this.recorded.transfers.filter((r) => within(r, window));
  }

  private record(list: ProviderRecord[], reference: string, amount: bigint, state: ChargeState | TransferState) {
    if (!state.providerRef) return;
    const status = state.status === 'succeeded' ? 'succeeded' : state.status === 'failed' ? 'failed' : 'pending';
    const found = list.find((r) => r.providerRef === state.providerRef);
    if (found) found.status = status;
    else
      list.push({ reference, providerRef: state.providerRef, amount, currency: 'NGN', status, at: this.clock.now() });
  }

  async tokenizeCard(card: CardDetails): Promise<CardToken> {
    const number = card.number.replace(/[\s-]/g, '');
    if (!/^\d{13,19}$/.test(number) || !luhnValid(number))
      throw badInput('card.number', 'card.number is not a valid card number.');
    if (!/^\d{3,4}$/.test(card.cvv)) throw badInput('card.cvv', 'card.cvv must be 3 or 4 digits.');
    const now = this.clock.now();
    if (!Number.isInteger(card.expMonth) || card.expMonth < 1 || card.expMonth > 12)
      throw badInput('card.expMonth', 'card.expMonth must be 1 to 12.');
    if (
      !Number.isInteger(card.expYear) ||
      card.expYear < now.getUTCFullYear() ||
      (card.expYear === now.getUTCFullYear() && card.expMonth < now.getUTCMonth() + 1)
    ) {
      throw badInput('card.expYear', `card.expYear ${card.expYear}: the card has expired.`);
    }
    const scenario = (Object.entries(SANDBOX_PAYMENTS.cards).find(([, n]) => n === number)?.[0] ??
      'noAuth') as Scenario;
    return {
      token: `sbx_card_${scenario}_${createHash('sha256').update(number).digest('hex').slice(0, 8)}`,
      brand: brandOf(number),
      last4: number.slice(-4),
      expMonth: card.expMonth,
      expYear: card.expYear,
    };
  }

  async chargeCard(charge: { reference: string; cardToken: string; amount: bigint }): Promise<ChargeState> {
    const existing = this.charges.get(charge.reference);
    if (existing) return this.chargeStates.get(existing.providerRef) ?? existing;
    const state = this.startCharge(charge);
    this.charges.set(charge.reference, state);
    this.chargeStates.set(state.providerRef, state);
    this.record(this.recorded.collections, charge.reference, charge.amount, state);
    return state;
  }

  private startCharge(charge: { reference: string; cardToken: string }): ChargeState {
    const scenario = (/^sbx_card_(\w+?)_/.exec(charge.cardToken)?.[1] ?? 'noAuth') as Scenario;
    const providerRef = `sbx_ch_${scenario}_${randomBytes(8).toString('hex')}`;
    switch (scenario) {
      case 'pinThenOtp':
        return { providerRef, status: 'pending', nextAction: { type: 'requires_pin', requires_pin: {} } };
      case 'threeDs':
        return {
          providerRef,
          status: 'pending',
          nextAction: {
            type: 'redirect_url',
            redirect_url: { url: `https://sandbox-3ds.partner-gateway.test/authorize/${providerRef}` },
          },
        };
      case 'declined':
        return { providerRef, status: 'failed', reason: 'The card was declined by the issuer.' };
      default:
        return { providerRef, status: 'succeeded' };
    }
  }

  async authorize(
    charge: { providerRef: string; step: NextAction['type'] },
    authorization: Authorization,
  ): Promise<ChargeState> {
    const state = this.authorizeStep(charge, authorization);
    this.chargeStates.set(state.providerRef, state);
    const found = this.recorded.collections.find((r) => r.providerRef === state.providerRef);
    if (found) this.record(this.recorded.collections, found.reference, found.amount ?? 0n, state);
    return state;
  }

  private authorizeStep(
    charge: { providerRef: string; step: NextAction['type'] },
    authorization: Authorization,
  ): ChargeState {
    const { providerRef, step } = charge;
    if (step === 'requires_pin' && authorization.type === 'pin') {
      return authorization.pin === SANDBOX_PAYMENTS.pin
        ? {
            providerRef,
            status: 'pending',
            nextAction: {
              type: 'requires_otp',
              requires_otp: {
                note: "Enter the OTP sent to the card holder (sandbox: the test card's OTP in the docs).",
              },
            },
          }
        : { providerRef, status: 'failed', reason: 'Incorrect PIN.' };
    }
    if (step === 'requires_otp' && authorization.type === 'otp') {
      return authorization.otp === SANDBOX_PAYMENTS.otp
        ? { providerRef, status: 'succeeded' }
        : { providerRef, status: 'failed', reason: 'Incorrect OTP.' };
    }
    if (step === 'redirect_url' && authorization.type === '3ds') return { providerRef, status: 'succeeded' };
    throw badInput('type', `This charge is waiting for ${step}; a ${authorization.type} authorization does not apply.`);
  }

  /** The charge's latest state here; one this process never saw is as its scenario starts (a step awaited: unknown). */
  async chargeStatus(providerRef: string): Promise<ChargeState> {
    const known = this.chargeStates.get(providerRef);
    if (known) return known;
    const scenario = /^sbx_ch_(\w+?)_/.exec(providerRef)?.[1];
    if (scenario === 'noAuth') return { providerRef, status: 'succeeded' };
    if (scenario === 'declined')
      return { providerRef, status: 'failed', reason: 'The card was declined by the issuer.' };
    return { providerRef, status: 'pending' };
  }

  async bankTransferAccount(charge: { reference: string; amount: bigint }): Promise<PayInAccount> {
    return {
      providerRef: `sbx_bt_${randomBytes(8).toString('hex')}`,
      accountNumber: `99${String(Number.parseInt(randomBytes(4).toString('hex'), 16) % 1e8).padStart(8, '0')}`,
      bankName: 'Sandbox Bank',
      accountName: `PGW/${charge.reference}`,
      expiresAt: new Date(this.clock.now().getTime() + SANDBOX_PAYMENTS.transferAccountMinutes * 60_000),
      note: `Transfer exactly NGN ${(Number(charge.amount) / 100).toFixed(2)} to this account before it expires.`,
    };
  }

  async ussd(charge: { reference: string; bankCode: string }): Promise<ChargeState> {
    if (!BANKS.some((b) => b.code === charge.bankCode))
      throw badInput(
        'bankCode',
        `bankCode ${charge.bankCode} is not a bank with USSD payments; list them with the banks.`,
      );
    const code = randomBytes(3).readUIntBE(0, 3) % 10_000;
    return {
      providerRef: `sbx_ussd_${randomBytes(8).toString('hex')}`,
      status: 'pending',
      nextAction: { type: 'payment_instruction', payment_instruction: { note: `Dial *737*000*${code}# to pay.` } },
    };
  }

  async paymentLink(charge: { reference: string }): Promise<{ providerRef: string; link: string }> {
    const providerRef = `sbx_link_${randomBytes(8).toString('hex')}`;
    return {
      providerRef,
      link: `https://sandbox-checkout.partner-gateway.test/pay/${encodeURIComponent(charge.reference)}`,
    };
  }

  async permanentAccount(owner: { reference: string; customer: Customer }): Promise<PayInAccount> {
    const digits = String(
      Number.parseInt(createHash('sha256').update(owner.reference).digest('hex').slice(0, 8), 16) % 1e8,
    ).padStart(8, '0');
    return {
      providerRef: `sbx_va_${owner.reference}`,
      accountNumber: `98${digits}`,
      bankName: 'Sandbox Bank',
      accountName: owner.customer.name,
      expiresAt: null,
      note: 'Transfers into this account fund the wallet.',
    };
  }

  async banks(): Promise<Bank[]> {
    return BANKS;
  }

  async resolveAccount({ bankCode, accountNumber }: { bankCode: string; accountNumber: string }): Promise<string> {
    const bank = BANKS.find((b) => b.code === bankCode);
    if (!bank) throw badInput('bankCode', `bankCode ${bankCode} is not a known bank; list them with the banks.`);
    if (accountNumber === SANDBOX_PAYMENTS.unknownAccount)
      throw badInput('accountNumber', `accountNumber ${accountNumber} was not found at ${bank.name}.`);
    const known = SANDBOX_PAYMENTS.knownAccount;
    return bankCode === known.bankCode && accountNumber === known.accountNumber
      ? known.accountName
      : `SANDBOX ACCOUNT ${accountNumber.slice(-4)}`;
  }

  async transfer(transfer: { reference: string; accountNumber: string; amount: bigint }): Promise<TransferState> {
    const existing = this.transfers.get(transfer.reference);
    if (existing) return existing;
    const providerRef = `sbx_tr_${randomBytes(8).toString('hex')}`;
    const { failingAccount, timeoutAccount, slowAccount } = SANDBOX_PAYMENTS.payouts;
    if (transfer.accountNumber === slowAccount) await new Promise((resolve) => setTimeout(resolve, 3000));
    if (transfer.accountNumber === timeoutAccount) {
      this.transfers.set(transfer.reference, { providerRef, status: 'succeeded' });
      this.record(this.recorded.transfers, transfer.reference, transfer.amount, { providerRef, status: 'succeeded' });
      throw generate({ upstream: { name: 'sandbox', label: 'The sandbox provider' }, mutating: true });
    }
    const state: TransferState =
      transfer.accountNumber === failingAccount
        ? { providerRef, status: 'failed', reason: 'The beneficiary bank rejected the transfer.' }
        : { providerRef, status: 'succeeded' };
    this.transfers.set(transfer.reference, state);
    this.record(this.recorded.transfers, transfer.reference, transfer.amount, state);
    return state;
  }

  async transferStatus(reference: string): Promise<TransferState> {
    return this.transfers.get(reference) ?? { providerRef: null, status: 'not_found' };
  }
}

/** Production without a configured provider. */
export class UnconfiguredPaymentsProvider implements PaymentsProvider {
  readonly name = 'unconfigured';
  readonly pollChargesAfterMs = 5 * 60_000;
  private fail(): never {
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      'The NGN wallet is not configured for production (FLUTTERWAVE_CLIENT_ID is unset).',
    );
  }
  tokenizeCard = async () => this.fail();
  chargeCard = async () => this.fail();
  authorize = async () => this.fail();
  chargeStatus = async () => this.fail();
  bankTransferAccount = async () => this.fail();
  ussd = async () => this.fail();
  paymentLink = async () => this.fail();
  permanentAccount = async () => this.fail();
  banks = async () => this.fail();
  resolveAccount = async () => this.fail();
  transfer = async () => this.fail();
  transferStatus = async () => this.fail();
  listCollections = async () => this.fail();
  listTransfers = async () => this.fail();
}

const within = (record: ProviderRecord, window: ListWindow) =>
  record.at.getTime() >= window.from.getTime() && record.at.getTime() < window.to.getTime();

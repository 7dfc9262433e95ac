import { diffOf, recordAudit, type AuditChanges } from '../audit/audit-log.js';
import type { Database, Executor } from '../../db/client.js';
import type { paymentMethods } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { badInput, notFound } from '../errors.js';
import { checkFieldsAwaiting } from '../field-checks.js';
import { isUuid } from '../ids.js';
import type { CardDetails, PaymentsProvider } from '../payments/payments-provider.js';
import { paymentMethodStore as store, type PaymentMethodRow } from './payment-method-store.js';

export type { PaymentMethodRow } from './payment-method-store.js';

export interface NewPaymentMethod {
  type: 'card' | 'bank_account';
  card?: CardDetails | null;
  bankAccount?: { bankCode: string; accountNumber: string } | null;
  makeDefault?: boolean | null;
}

const MAX_METHODS = 20;

type MethodDetails = Omit<typeof paymentMethods.$inferInsert, 'userId' | 'environment' | 'provider'>;

/**
 * Stored payment methods. A card is kept only as the provider's token with brand, last four and
 * expiry: its number and CVV go to the provider's tokenizer and are never stored or logged. One
 * method is the default (a partial unique index holds that under concurrency).
 */
export class PaymentMethodService {
  constructor(
    private readonly db: Database,
    private readonly providerFor: (environment: Environment) => PaymentsProvider,
  ) {}

  list(principal: Principal): Promise<PaymentMethodRow[]> {
    return store.listOwned(this.db, principal);
  }

  async get(principal: Principal, id: string): Promise<PaymentMethodRow> {
    const row = isUuid(id) ? await store.findOwned(this.db, principal, id) : undefined;
    if (!row) throw notFound('Payment method');
    return row;
  }

  async create(principal: Principal, input: NewPaymentMethod): Promise<PaymentMethodRow> {
    const provider = this.providerFor(principal.environment);
    const values = await methodDetails(provider, input);
    return this.db.transaction(async (tx) => {
      await store.lockOwner(tx, principal);
      const existing = await store.countOwned(tx, principal);
      if (existing >= MAX_METHODS)
        throw badInput('type', `An account may store at most ${MAX_METHODS} payment methods.`);
      const makeDefault = input.makeDefault === true || existing === 0;
      if (makeDefault) await store.clearDefault(tx, principal);
      const row = await store.insert(tx, {
        ...values,
        userId: principal.userId,
        environment: principal.environment,
        provider: provider.name,
        isDefault: makeDefault,
      });
      await this.audit(tx, principal, 'payment_method.created', row.id, diffOf(null, row, AUDITED_FIELDS));
      return row;
    });
  }

  async remove(principal: Principal, id: string): Promise<PaymentMethodRow> {
    const method = await this.get(principal, id);
    return this.db.transaction(async (tx) => {
      await store.lockOwner(tx, principal);
      const row = await store.softDelete(tx, method.id, new Date());
      // The oldest remaining method becomes the default, so there is one while any exist.
      if (method.isDefault) {
        const next = await store.oldestOwned(tx, principal);
        if (next) await store.makeDefault(tx, next);
      }
      await this.audit(tx, principal, 'payment_method.deleted', method.id, diffOf(method, null, AUDITED_FIELDS));
      return row;
    });
  }

  async setDefault(principal: Principal, id: string): Promise<PaymentMethodRow> {
    const method = await this.get(principal, id);
    return this.db.transaction(async (tx) => {
      await store.lockOwner(tx, principal);
      await store.clearDefault(tx, principal);
      const row = await store.makeDefault(tx, method.id);
      await this.audit(tx, principal, 'payment_method.default_set', method.id, diffOf(method, row, ['isDefault']));
      return row;
    });
  }

  private audit(tx: Executor, principal: Principal, action: string, id: string, changes: AuditChanges) {
    return recordAudit(
      tx,
      {
        userId: principal.userId,
        environment: principal.environment,
        action,
        targetType: 'payment_method',
        targetId: id,
        changes,
        principal,
      },
      new Date(),
    );
  }
}

/**
 * What is stored of a new method: a card's provider token with brand, last four and expiry (its
 * number and CVV go only to the tokenizer); a bank account checked and resolved to its holder's name.
 */
async function methodDetails(provider: PaymentsProvider, input: NewPaymentMethod): Promise<MethodDetails> {
  if (input.type === 'card') {
    if (!input.card) throw badInput('card', 'card is required for a card payment method.');
    const token = await provider.tokenizeCard(input.card);
    return {
      type: 'card',
      providerToken: token.token,
      brand: token.brand,
      last4: token.last4,
      expMonth: token.expMonth,
      expYear: token.expYear,
    };
  }
  if (input.type === 'bank_account') {
    if (!input.bankAccount) throw badInput('bankAccount', 'bankAccount is required for a bank_account payment method.');
    const { bankCode, accountNumber } = input.bankAccount;
    const { bank } = await checkFieldsAwaiting({
      accountNumber: () => {
        if (!/^\d{10}$/.test(accountNumber))
          throw badInput(
            'bankAccount.accountNumber',
            'bankAccount.accountNumber must be a 10-digit NUBAN account number.',
          );
      },
      bank: async () => {
        const bank = (await provider.banks()).find((b) => b.code === bankCode);
        if (!bank)
          throw badInput(
            'bankAccount.bankCode',
            `bankAccount.bankCode ${JSON.stringify(bankCode)} is not a known bank.`,
          );
        return bank;
      },
    });
    const accountName = await provider.resolveAccount({ bankCode, accountNumber });
    return { type: 'bank_account', bankCode, bankName: bank.name, accountNumber, accountName };
  }
  throw badInput('type', 'type must be card or bank_account.');
}

/** What an audit record shows of a method: never the provider's card token. */
const AUDITED_FIELDS = [
  'type',
  'brand',
  'last4',
  'expMonth',
  'expYear',
  'bankCode',
  'bankName',
  'accountNumber',
  'accountName',
  'isDefault',
] as const;

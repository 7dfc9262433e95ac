import { and, asc, eq, isNull } from 'drizzle-orm';
import { diffOf, recordAudit, type AuditChanges } from '../audit/audit-log.js';
import type { Database, Executor } from '../../db/client.js';
import { users } from '../../db/schema.js';
import { paymentMethods } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { badInput, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import type { CardDetails, PaymentsProvider } from '../payments/payments-provider.js';

export type PaymentMethodRow = typeof paymentMethods.$inferSelect;

export interface NewPaymentMethod {
  type: 'card' | 'bank_account';
  card?: CardDetails | null;
  bankAccount?: { bankCode: string; accountNumber: string } | null;
  makeDefault?: boolean | null;
}

const MAX_METHODS = 20;

/**
 * Serialises changes to one user's payment methods (the user row's lock): concurrent creates,
 * deletes and default changes would otherwise race for the single default (the partial unique
 * index would refuse one of them with an error instead).
 */
async function lockOwner(tx: Executor, principal: Principal): Promise<void> {
  await tx.select({ id: users.id }).from(users).where(eq(users.id, principal.userId)).for('update');
}
const owned = (principal: Principal) =>
  and(
    eq(paymentMethods.userId, principal.userId),
    eq(paymentMethods.environment, principal.environment),
    isNull(paymentMethods.deletedAt),
  );

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
    return this.db.select().from(paymentMethods).where(owned(principal)).orderBy(asc(paymentMethods.createdAt));
  }

  async get(principal: Principal, id: string): Promise<PaymentMethodRow> {
    const [row] = isUuid(id)
      ? await this.db
          .select()
          .from(paymentMethods)
          .where(and(owned(principal), eq(paymentMethods.id, id)))
      : [];
    if (!row) throw notFound('Payment method');
    return row;
  }

  async create(principal: Principal, input: NewPaymentMethod): Promise<PaymentMethodRow> {
    const provider = this.providerFor(principal.environment);
    let values: Partial<typeof paymentMethods.$inferInsert>;
    if (input.type === 'card') {
      if (!input.card) throw badInput('card', 'card is required for a card payment method.');
      const token = await provider.tokenizeCard(input.card);
      values = {
        type: 'card',
        providerToken: token.token,
        brand: token.brand,
        last4: token.last4,
        expMonth: token.expMonth,
        expYear: token.expYear,
      };
    } else if (input.type === 'bank_account') {
      if (!input.bankAccount)
        throw badInput('bankAccount', 'bankAccount is required for a bank_account payment method.');
      const { bankCode, accountNumber } = input.bankAccount;
      if (!/^\d{10}$/.test(accountNumber))
        throw badInput(
          'bankAccount.accountNumber',
          'bankAccount.accountNumber must be a 10-digit NUBAN account number.',
        );
      const bank = (await provider.banks()).find((b) => b.code === bankCode);
      if (!bank)
        throw badInput('bankAccount.bankCode', `bankAccount.bankCode ${JSON.stringify(bankCode)} is not a known bank.`);
      const accountName = await provider.resolveAccount({ bankCode, accountNumber });
      values = { type: 'bank_account', bankCode, bankName: bank.name, accountNumber, accountName };
    } else {
      throw badInput('type', 'type must be card or bank_account.');
    }
    return this.db.transaction(async (tx) => {
      await lockOwner(tx, principal);
      const existing = await tx
        .select({ id: paymentMethods.id, isDefault: paymentMethods.isDefault })
        .from(paymentMethods)
        .where(owned(principal));
      if (existing.length >= MAX_METHODS)
        throw badInput('type', `An account may store at most ${MAX_METHODS} payment methods.`);
      const makeDefault = input.makeDefault === true || existing.length === 0;
      if (makeDefault)
        await tx
          .update(paymentMethods)
          .set({ isDefault: false })
          .where(and(owned(principal), eq(paymentMethods.isDefault, true)));
      const [row] = await tx
        .insert(paymentMethods)
        .values({
          ...values,
          type: values.type!,
          userId: principal.userId,
          environment: principal.environment,
          provider: provider.name,
          isDefault: makeDefault,
        })
        .returning();
      await this.audit(tx, principal, 'payment_method.created', row!.id, diffOf(null, row!, AUDITED_FIELDS));
      return row!;
    });
  }

  async remove(principal: Principal, id: string): Promise<PaymentMethodRow> {
    const method = await this.get(principal, id);
    return this.db.transaction(async (tx) => {
      await lockOwner(tx, principal);
      const [row] = await tx
        .update(paymentMethods)
        .set({ deletedAt: new Date(), isDefault: false })
        .where(eq(paymentMethods.id, method.id))
        .returning();
      // The oldest remaining method becomes the default, so there is one while any exist.
      if (method.isDefault) {
        const [next] = await tx
          .select({ id: paymentMethods.id })
          .from(paymentMethods)
          .where(owned(principal))
          .orderBy(asc(paymentMethods.createdAt))
          .limit(1);
        if (next) await tx.update(paymentMethods).set({ isDefault: true }).where(eq(paymentMethods.id, next.id));
      }
      await this.audit(tx, principal, 'payment_method.deleted', method.id, diffOf(method, null, AUDITED_FIELDS));
      return row!;
    });
  }

  async setDefault(principal: Principal, id: string): Promise<PaymentMethodRow> {
    const method = await this.get(principal, id);
    return this.db.transaction(async (tx) => {
      await lockOwner(tx, principal);
      await tx
        .update(paymentMethods)
        .set({ isDefault: false })
        .where(and(owned(principal), eq(paymentMethods.isDefault, true)));
      const [row] = await tx
        .update(paymentMethods)
        .set({ isDefault: true })
        .where(eq(paymentMethods.id, method.id))
        .returning();
      await this.audit(tx, principal, 'payment_method.default_set', method.id, diffOf(method, row!, ['isDefault']));
      return row!;
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

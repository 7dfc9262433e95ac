import type { Database, Executor } from '../../db/client.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Window } from '../../domain/keyset.js';
import { type AuditChanges, diffOf, recordAudit } from '../audit/audit-log.js';
import { isUniqueViolation } from '../../db/sql-state.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { DomainError, InputProblems, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { checkPage, paged } from '../pagination.js';
import { type BusinessCustomerRow, type CustomerStatus, customerStore as store } from './customer-store.js';

export type { BusinessCustomerRow } from './customer-store.js';

export interface CustomerInput {
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  externalRef?: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?\d{7,15}$/;
const EXTERNAL_REF = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_PAGE = 100;
const AUDITED_FIELDS = ['name', 'phone', 'email', 'externalRef', 'status'] as const;

/**
 * Customers of the caller's businesses, in the caller's environment. Another user's business (or
 * its customers) answers exactly like a missing one.
 */
export class CustomerService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, businessId: string, input: CustomerInput): Promise<BusinessCustomerRow> {
    await this.ownBusiness(principal, businessId);
    const values = checked(input, true);
    const now = this.clock.now();
    try {
      return await this.db.transaction(async (tx) => {
        const row = await store.insert(tx, {
          businessId,
          environment: principal.environment,
          name: values.name!,
          phone: values.phone ?? null,
          email: values.email ?? null,
          externalRef: values.externalRef ?? null,
          createdAt: now,
          updatedAt: now,
        });
        await this.audit(tx, principal, 'business_customer.created', row, diffOf(null, row, AUDITED_FIELDS));
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw this.refTaken(values.externalRef!);
      throw error;
    }
  }

  async list(principal: Principal, businessId: string, page = 1, limit = 20, status?: CustomerStatus) {
    await this.ownBusiness(principal, businessId);
    checkPage(page, limit, MAX_PAGE);
    const { rows, total } = await store.page(readsOf(this.db), bookOf(principal, businessId), status, page, limit);
    return paged('customers', rows, total, page, limit);
  }

  /**
   * A window of a business's customers, newest first. The business must already be known to be
   * the caller's (the graph reaches it only through the caller's own businesses).
   */
  async window(principal: Principal, businessId: string, window: Window, status?: CustomerStatus) {
    return store.window(readsOf(this.db), bookOf(principal, businessId), window, status);
  }

  /** The same window of several businesses' customers, in one query (the graph's nested lists). */
  async windows(principal: Principal, businessIds: readonly string[], window: Window, status?: CustomerStatus) {
    return store.windows(readsOf(this.db), businessIds.filter(isUuid), principal.environment, window, status);
  }

  countOf(principal: Principal, businessId: string, status?: CustomerStatus): Promise<number> {
    return store.count(readsOf(this.db), bookOf(principal, businessId), status);
  }

  /** Customers among `ids` of the caller's businesses in its environment, for per-request loaders. */
  async byIds(principal: Principal, ids: readonly string[]): Promise<BusinessCustomerRow[]> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return [];
    return store.byIdsOfOwner(this.db, principal.userId, principal.environment, wanted);
  }

  async get(principal: Principal, businessId: string, customerId: string): Promise<BusinessCustomerRow> {
    await this.ownBusiness(principal, businessId);
    const row = isUuid(customerId)
      ? await store.findInBook(this.db, bookOf(principal, businessId), customerId)
      : undefined;
    if (!row) throw notFound('Customer');
    return row;
  }

  async update(
    principal: Principal,
    businessId: string,
    customerId: string,
    input: CustomerInput,
  ): Promise<BusinessCustomerRow> {
    const current = await this.get(principal, businessId, customerId);
    const values = checked(input, false);
    try {
      return await this.db.transaction(async (tx) => {
        const row = await store.update(tx, current.id, values, this.clock.now());
        await this.audit(tx, principal, 'business_customer.updated', row, diffOf(current, row, AUDITED_FIELDS));
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw this.refTaken(values.externalRef!);
      throw error;
    }
  }

  async disable(principal: Principal, businessId: string, customerId: string): Promise<BusinessCustomerRow> {
    const current = await this.get(principal, businessId, customerId);
    return this.db.transaction(async (tx) => {
      const row = await store.update(tx, current.id, { status: 'disabled' }, this.clock.now());
      await this.audit(tx, principal, 'business_customer.disabled', row, diffOf(current, row, ['status']));
      return row;
    });
  }

  private audit(tx: Executor, principal: Principal, action: string, row: BusinessCustomerRow, changes: AuditChanges) {
    return recordAudit(
      tx,
      {
        userId: principal.userId,
        environment: principal.environment,
        action,
        targetType: 'business_customer',
        targetId: row.id,
        changes: { ...changes, businessId: { to: row.businessId } },
        principal,
      },
      this.clock.now(),
    );
  }

  private async ownBusiness(principal: Principal, businessId: string): Promise<void> {
    const owner = isUuid(businessId) ? await store.ownerOfBusiness(this.db, businessId) : undefined;
    if (owner !== principal.userId) throw notFound('Business');
  }

  private refTaken(externalRef: string) {
    return new DomainError(
      'CONFLICT',
      `externalRef ${JSON.stringify(externalRef)} is already used by another customer of this business.`,
      { field: 'externalRef' },
    );
  }
}

const bookOf = (principal: Principal, businessId: string) => ({ businessId, environment: principal.environment });

/** The fields given, trimmed and checked; on create, name is required. */
interface CheckedCustomer {
  name?: string;
  phone?: string;
  email?: string;
  externalRef?: string;
}

/** Every field is checked before any refusal, so one answer names every bad field. */
function checked(input: CustomerInput, creating: boolean): CheckedCustomer {
  const out: CheckedCustomer = {};
  const problems = new InputProblems();
  const name = input.name?.trim();
  if (creating || input.name !== undefined) {
    if (!name) problems.add('name', 'name is required.');
    else if (name.length > 100) problems.add('name', 'name must be at most 100 characters.');
    else out.name = name;
  }
  if (input.phone !== undefined && input.phone !== null) {
    const phone = input.phone.replace(/[\s-]/g, '');
    if (!PHONE.test(phone)) problems.add('phone', 'phone must be a phone number such as +2348031234567.');
    else out.phone = phone;
  }
  if (input.email !== undefined && input.email !== null) {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) problems.add('email', 'email must be an email address.');
    else out.email = email;
  }
  if (input.externalRef !== undefined && input.externalRef !== null) {
    const externalRef = input.externalRef.trim();
    if (!EXTERNAL_REF.test(externalRef))
      problems.add('externalRef', 'externalRef must be 1 to 64 letters, digits, ".", ":", "-" or "_".');
    else out.externalRef = externalRef;
  }
  problems.throwIfAny();
  return out;
}

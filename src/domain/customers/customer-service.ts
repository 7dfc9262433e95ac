import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { keysetPage, keysetPages, type Window } from '../../domain/keyset.js';
import { type AuditChanges, diffOf, recordAudit } from '../audit/audit-log.js';
import { businessCustomers } from '../../db/customers-schema.js';
import { businesses } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { isUuid } from '../ids.js';
import { checkPage, paged } from '../pagination.js';

export type BusinessCustomerRow = typeof businessCustomers.$inferSelect;

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
        const [row] = await tx
          .insert(businessCustomers)
          .values({
            businessId,
            environment: principal.environment,
            name: values.name!,
            phone: values.phone ?? null,
            email: values.email ?? null,
            externalRef: values.externalRef ?? null,
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        await this.audit(tx, principal, 'business_customer.created', row!, diffOf(null, row!, AUDITED_FIELDS));
        return row!;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw this.refTaken(values.externalRef!);
      throw error;
    }
  }

  async list(principal: Principal, businessId: string, page = 1, limit = 20, status?: 'active' | 'disabled') {
    await this.ownBusiness(principal, businessId);
    checkPage(page, limit, MAX_PAGE);
    const where = and(
      eq(businessCustomers.businessId, businessId),
      eq(businessCustomers.environment, principal.environment),
      status ? eq(businessCustomers.status, status) : undefined,
    );
    const rows = await this.db
      .select()
      .from(businessCustomers)
      .where(where)
      .orderBy(desc(businessCustomers.createdAt), desc(businessCustomers.id))
      .limit(limit)
      .offset((page - 1) * limit);
    const [total] = await this.db.select({ n: count() }).from(businessCustomers).where(where);
    return paged('customers', rows, Number(total?.n ?? 0), page, limit);
  }

  /**
   * A window of a business's customers, newest first. The business must already be known to be
   * the caller's (the graph reaches it only through the caller's own businesses).
   */
  async window(principal: Principal, businessId: string, window: Window, status?: 'active' | 'disabled') {
    return keysetPage(this.db, businessCustomers, this.customersOf(principal, businessId, status), window);
  }

  /** The same window of several businesses' customers, in one query (the graph's nested lists). */
  async windows(principal: Principal, businessIds: readonly string[], window: Window, status?: 'active' | 'disabled') {
    return keysetPages(
      this.db,
      businessCustomers,
      businessCustomers.businessId,
      businessIds.filter(isUuid),
      and(
        eq(businessCustomers.environment, principal.environment),
        status ? eq(businessCustomers.status, status) : undefined,
      ),
      window,
    );
  }

  async countOf(principal: Principal, businessId: string, status?: 'active' | 'disabled'): Promise<number> {
    const [total] = await this.db
      .select({ n: count() })
      .from(businessCustomers)
      .where(this.customersOf(principal, businessId, status));
    return Number(total?.n ?? 0);
  }

  /** Customers among `ids` of the caller's businesses in its environment, for per-request loaders. */
  async byIds(principal: Principal, ids: readonly string[]): Promise<BusinessCustomerRow[]> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return [];
    const rows = await this.db
      .select({ customer: businessCustomers })
      .from(businessCustomers)
      .innerJoin(businesses, eq(businesses.id, businessCustomers.businessId))
      .where(
        and(
          inArray(businessCustomers.id, wanted),
          eq(businessCustomers.environment, principal.environment),
          eq(businesses.ownerUserId, principal.userId),
        ),
      );
    return rows.map((r) => r.customer);
  }

  private customersOf(principal: Principal, businessId: string, status?: 'active' | 'disabled') {
    return and(
      eq(businessCustomers.businessId, businessId),
      eq(businessCustomers.environment, principal.environment),
      status ? eq(businessCustomers.status, status) : undefined,
    );
  }

  async get(principal: Principal, businessId: string, customerId: string): Promise<BusinessCustomerRow> {
    await this.ownBusiness(principal, businessId);
    const [row] = isUuid(customerId)
      ? await this.db
          .select()
          .from(businessCustomers)
          .where(
            and(
              eq(businessCustomers.id, customerId),
              eq(businessCustomers.businessId, businessId),
              eq(businessCustomers.environment, principal.environment),
            ),
          )
      : [];
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
        const [row] = await tx
          .update(businessCustomers)
          .set({ ...values, updatedAt: this.clock.now() })
          .where(eq(businessCustomers.id, current.id))
          .returning();
        await this.audit(tx, principal, 'business_customer.updated', row!, diffOf(current, row!, AUDITED_FIELDS));
        return row!;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw this.refTaken(values.externalRef!);
      throw error;
    }
  }

  async disable(principal: Principal, businessId: string, customerId: string): Promise<BusinessCustomerRow> {
    const current = await this.get(principal, businessId, customerId);
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(businessCustomers)
        .set({ status: 'disabled', updatedAt: this.clock.now() })
        .where(eq(businessCustomers.id, current.id))
        .returning();
      await this.audit(tx, principal, 'business_customer.disabled', row!, diffOf(current, row!, ['status']));
      return row!;
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
    const [business] = isUuid(businessId)
      ? await this.db.select({ owner: businesses.ownerUserId }).from(businesses).where(eq(businesses.id, businessId))
      : [];
    if (!business || business.owner !== principal.userId) throw notFound('Business');
  }

  private refTaken(externalRef: string) {
    return new DomainError(
      'CONFLICT',
      `externalRef ${JSON.stringify(externalRef)} is already used by another customer of this business.`,
      { field: 'externalRef' },
    );
  }
}

/** The fields given, trimmed and checked; on create, name is required. */
interface CheckedCustomer {
  name?: string;
  phone?: string;
  email?: string;
  externalRef?: string;
}

function checked(input: CustomerInput, creating: boolean): CheckedCustomer {
  const out: CheckedCustomer = {};
  const name = input.name?.trim();
  if (creating || input.name !== undefined) {
    if (!name) throw badInput('name', 'name is required.');
    if (name.length > 100) throw badInput('name', 'name must be at most 100 characters.');
    out.name = name;
  }
  if (input.phone !== undefined && input.phone !== null) {
    const phone = input.phone.replace(/[\s-]/g, '');
    if (!PHONE.test(phone)) throw badInput('phone', 'phone must be a phone number such as +2348031234567.');
    out.phone = phone;
  }
  if (input.email !== undefined && input.email !== null) {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) throw badInput('email', 'email must be an email address.');
    out.email = email;
  }
  if (input.externalRef !== undefined && input.externalRef !== null) {
    const externalRef = input.externalRef.trim();
    if (!EXTERNAL_REF.test(externalRef))
      throw badInput('externalRef', 'externalRef must be 1 to 64 letters, digits, ".", ":", "-" or "_".');
    out.externalRef = externalRef;
  }
  return out;
}

import { sql } from 'drizzle-orm';
import { index, pgEnum, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { businesses, environmentEnum } from './schema.js';

export const customerStatusEnum = pgEnum('business_customer_status', ['active', 'disabled']);

/** A customer of a business, per environment (the seed's name, phone, email and externalRef). */
export const businessCustomers = pgTable(
  'business_customers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    businessId: uuid('business_id')
      .notNull()
      .references(() => businesses.id),
    environment: environmentEnum('environment').notNull(),
    name: text('name').notNull(),
    phone: text('phone'),
    email: text('email'),
    externalRef: text('external_ref'),
    status: customerStatusEnum('status').notNull().default('active'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('business_customers_business_idx').on(t.businessId, t.environment, t.createdAt),
    uniqueIndex('business_customers_external_ref_key')
      .on(t.businessId, t.environment, t.externalRef)
      .where(sql`${t.externalRef} is not null`),
  ],
);

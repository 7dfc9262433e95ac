import { pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from './columns.js';
import { ownerColumns } from './schema.js';

/**
 * Facade mode: the upstream webhook secret of each partner account (and environment), and the id
 * its inbound URL carries (`/webhooks/upstream/<id>`), where the upstream delivers that account's
 * events. The secret is sealed as webhook endpoints' are (SecretBox), bound to this row's id.
 */
export const facadeInboundSecrets = pgTable(
  'facade_inbound_secrets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    secretSealed: text('secret_sealed').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('facade_inbound_secrets_owner_key').on(t.userId, t.environment)],
);

import DataLoader from 'dataloader';
import {
  type Activity,
  offrampActivity,
  parseActivityKey,
  solanaActivity,
  walletActivity,
} from '../domain/activity/activity.js';
import type { Owner } from '../domain/activity/owned-rows.js';
import type { RecordKind, RecordRow, ReferencedKind } from '../domain/activity/record-lookups.js';
import type { Principal } from '../domain/auth/principal.js';
import type { BusinessCustomerRow } from '../domain/customers/customer-service.js';
import type { PageOf, Window } from '../domain/keyset.js';
import type { SwapQuoteView } from '../domain/solana/swap-quote.js';
import type { User } from '../domain/users/user.js';
import type { Services } from '../services.js';

/** Per-request batching: one query per kind of lookup, however many fields ask. */
export function createLoaders(services: Services, principal: Principal | null) {
  const lookups = services.recordLookups;
  // Every owned lookup is scoped to the caller's user and environment: a record of anyone else is
  // absent from the answer, exactly like a record that does not exist.
  const owner: Owner = principal
    ? { userId: principal.userId, environment: principal.environment }
    : { userId: '00000000-0000-0000-0000-000000000000', environment: 'sandbox' };
  const byId = <K extends RecordKind>(kind: K) =>
    keyed<RecordRow<K>>(
      async (ids) => lookups.byIds(kind, owner, ids),
      (row) => row.id,
    );
  const byReference = <K extends ReferencedKind>(kind: K) =>
    keyed<RecordRow<K>>(
      async (refs) => lookups.byReferences(kind, owner, refs),
      (row) => row.reference,
    );

  const walletTransactionById = byId('walletTransactions');
  const solanaTransferById = byId('solanaTransfers');
  const offrampOrderById = byId('offrampOrders');

  // One loader per window and status asked for: every business in the answer shares its query.
  const customerWindows = new Map<string, DataLoader<string, PageOf<BusinessCustomerRow>>>();
  const customerWindow = (window: Window, status: 'active' | 'disabled' | undefined) => {
    const key = JSON.stringify([window, status ?? null]);
    let loader = customerWindows.get(key);
    if (!loader) {
      loader = new DataLoader(async (businessIds) => {
        if (!principal) return businessIds.map(() => ({ items: [], hasNextPage: false, hasPreviousPage: false }));
        const pages = await services.customers.windows(principal, businessIds, window, status);
        return businessIds.map(
          (id) => pages.get(id) ?? { items: [], hasNextPage: false, hasPreviousPage: window.from !== undefined },
        );
      });
      customerWindows.set(key, loader);
    }
    return loader;
  };

  return {
    /** A window of a business's customers, batched across the businesses of one answer. */
    customerWindow,
    userById: new DataLoader<string, User | null>(async (ids) => {
      const found = new Map((await services.users.usersByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    walletTransactionById,
    walletTransactionByReference: byReference('walletTransactions'),
    depositById: byId('deposits'),
    depositByReference: byReference('deposits'),
    payoutById: byId('payouts'),
    payoutByReference: byReference('payouts'),
    billRecordById: byId('billRecords'),
    billRecordByReference: byReference('billRecords'),
    // Deleted methods included: a deposit still names the card it was paid with.
    paymentMethodById: byId('paymentMethods'),
    solanaTransferById,
    offrampOrderById,
    offrampOrderByReference: byReference('offrampOrders'),
    swapQuoteById: new DataLoader<string, SwapQuoteView | null>(async (ids) => {
      const found = new Map((await lookups.swapQuotesByIds(owner, ids)).map((q) => [q.id, q.view]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    businessById: keyed(
      async (ids) => services.users.ownedBusinessesByIds(owner.userId, ids),
      (b) => b.id,
    ),
    businessCustomerById: keyed(
      async (ids) => (principal ? services.customers.byIds(principal, ids) : []),
      (c) => c.id,
    ),
    /** A money movement by its `source:uuid` key, from whichever table holds it. */
    activityByKey: new DataLoader<string, Activity | null>(async (keys) =>
      Promise.all(
        keys.map(async (key) => {
          const parsed = parseActivityKey(key);
          if (!parsed) return null;
          if (parsed.source === 'wallet') {
            const row = await walletTransactionById.load(parsed.rowId);
            return row ? walletActivity(row) : null;
          }
          if (parsed.source === 'solana') {
            const row = await solanaTransferById.load(parsed.rowId);
            return row ? solanaActivity(row) : null;
          }
          const row = await offrampOrderById.load(parsed.rowId);
          return row ? offrampActivity(row) : null;
        }),
      ),
    ),
  };
}

/** A loader over a batch query that returns the rows it found, in any order. */
function keyed<Row>(load: (keys: readonly string[]) => Promise<Row[]>, keyOf: (row: Row) => string) {
  return new DataLoader<string, Row | null>(async (keys) => {
    const found = new Map((await load(keys)).map((row) => [keyOf(row), row]));
    return keys.map((key) => found.get(key) ?? null);
  });
}

export type Loaders = ReturnType<typeof createLoaders>;

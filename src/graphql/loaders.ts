import DataLoader from 'dataloader';
import type { Column } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { billRecords } from '../db/bills-schema.js';
import { offrampOrders } from '../db/offramp-schema.js';
import { type Owner, ownedRowsByIds, ownedRowsByReferences } from '../db/owned-rows.js';
import { solanaQuotes, solanaTransfers } from '../db/solana-schema.js';
import { deposits, paymentMethods, payouts, walletTransactions } from '../db/wallet-schema.js';
import {
  type Activity,
  offrampActivity,
  parseActivityKey,
  solanaActivity,
  walletActivity,
} from '../domain/activity/activity.js';
import type { Principal } from '../domain/auth/principal.js';
import type { SwapQuoteView, StoredQuote } from '../domain/solana/swap-quote.js';
import type { User } from '../domain/users/user.js';
import type { Services } from '../services.js';

/** Per-request batching: one query per kind of lookup, however many fields ask. */
export function createLoaders(services: Services, principal: Principal | null) {
  const { db } = services;
  // Every owned lookup is scoped to the caller's user and environment: a record of anyone else is
  // absent from the answer, exactly like a record that does not exist.
  const owner: Owner = principal
    ? { userId: principal.userId, environment: principal.environment }
    : { userId: '00000000-0000-0000-0000-000000000000', environment: 'sandbox' };
  type Owned = PgTable & { id: Column; userId: Column; environment: Column };
  const byId = <T extends Owned>(table: T) =>
    keyed<T['$inferSelect']>(
      async (ids) => ownedRowsByIds(db, table, owner, ids),
      (row) => row.id as string,
    );
  const byReference = <T extends Owned & { reference: Column }>(table: T) =>
    keyed<T['$inferSelect']>(
      async (refs) => ownedRowsByReferences(db, table, owner, refs),
      (row) => row.reference as string,
    );

  const walletTransactionById = byId(walletTransactions);
  const solanaTransferById = byId(solanaTransfers);
  const offrampOrderById = byId(offrampOrders);

  return {
    userById: new DataLoader<string, User | null>(async (ids) => {
      const found = new Map((await services.users.usersByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    walletTransactionById,
    walletTransactionByReference: byReference(walletTransactions),
    depositById: byId(deposits),
    depositByReference: byReference(deposits),
    payoutById: byId(payouts),
    payoutByReference: byReference(payouts),
    billRecordById: byId(billRecords),
    billRecordByReference: byReference(billRecords),
    // Deleted methods included: a deposit still names the card it was paid with.
    paymentMethodById: byId(paymentMethods),
    solanaTransferById,
    offrampOrderById,
    offrampOrderByReference: byReference(offrampOrders),
    swapQuoteById: new DataLoader<string, SwapQuoteView | null>(async (ids) => {
      const found = new Map(
        (await ownedRowsByIds(db, solanaQuotes, owner, ids)).map((r) => [r.id, (r.quote as StoredQuote).view]),
      );
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

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
import type { Business, User } from '../domain/users/user.js';
import type { Services } from '../services.js';
import { UpstreamReads } from './upstream-reads.js';

/** Per-request batching: one query per kind of lookup, however many fields ask. */
export function createLoaders(services: Services, principal: Principal | null): Loaders {
  return new Loaders(services, principal);
}

/**
 * The loaders of one request (or one subscription event). Each is built on first use: most
 * operations touch one or two of them, and building all of them for every request cost more than
 * the lookups they batch. Every owned lookup is scoped to the caller's user and environment: a record
 * of anyone else is absent from the answer, exactly like a record that does not exist.
 */
// Loader names, fixed strings so a lookup allocates none.
const ID_LOADER = {
  walletTransactions: 'walletTransactionById',
  deposits: 'depositById',
  payouts: 'payoutById',
  billRecords: 'billRecordById',
  paymentMethods: 'paymentMethodById',
  solanaTransfers: 'solanaTransferById',
  offrampOrders: 'offrampOrderById',
} satisfies Record<RecordKind, string>;
const REFERENCE_LOADER = {
  walletTransactions: 'walletTransactionByReference',
  deposits: 'depositByReference',
  payouts: 'payoutByReference',
  billRecords: 'billRecordByReference',
  offrampOrders: 'offrampOrderByReference',
} satisfies Record<ReferencedKind, string>;

export class Loaders {
  private readonly owner: Owner;
  private readonly made = new Map<string, DataLoader<string, unknown>>();
  private readonly usersNow = new Map<string, User>();
  private reads: UpstreamReads | undefined;
  // One loader per window and status asked for: every business in the answer shares its query.
  private readonly customerWindows = new Map<string, DataLoader<string, PageOf<BusinessCustomerRow>>>();

  constructor(
    private readonly services: Services,
    private readonly principal: Principal | null,
  ) {
    this.owner = principal
      ? { userId: principal.userId, environment: principal.environment }
      : { userId: '00000000-0000-0000-0000-000000000000', environment: 'sandbox' };
  }

  /** A window of a business's customers, batched across the businesses of one answer. */
  customerWindow(window: Window, status: 'active' | 'disabled' | undefined) {
    const key = JSON.stringify([window, status ?? null]);
    let loader = this.customerWindows.get(key);
    if (!loader) {
      const { services, principal } = this;
      loader = new DataLoader(async (businessIds) => {
        if (!principal) return businessIds.map(() => ({ items: [], hasNextPage: false, hasPreviousPage: false }));
        const pages = await services.customers.windows(principal, businessIds, window, status);
        return businessIds.map(
          (id) => pages.get(id) ?? { items: [], hasNextPage: false, hasPreviousPage: window.from !== undefined },
        );
      });
      this.customerWindows.set(key, loader);
    }
    return loader;
  }

  /** Facade mode: the request's upstream reads, one per key (upstream-reads.ts). */
  get upstreamReads(): UpstreamReads {
    this.reads ??= new UpstreamReads();
    return this.reads;
  }

  get userById(): DataLoader<string, User | null> {
    let loader = this.found<User | null>('userById');
    if (!loader) {
      loader = this.keep(
        'userById',
        new DataLoader<string, User | null>(async (ids) => {
          const found = new Map((await this.services.users.usersByIds(ids)).map((u) => [u.id, u]));
          return ids.map((id) => found.get(id) ?? null);
        }),
      );
      // Users already answered by userNow stay the same objects for the rest of the request.
      for (const [id, user] of this.usersNow) loader.prime(id, user);
    }
    return loader;
  }

  /**
   * The user with this id when it can be answered without waiting: one this request already had
   * from here, or one in the users' cache while the request has not used userById (whose answers
   * then stay the request's). Undefined: ask userById. `me` runs on almost every request, and a
   * loader's promise made the whole operation asynchronous.
   */
  userNow(id: string): User | undefined {
    const known = this.usersNow.get(id);
    if (known || this.made.has('userById')) return known;
    const user = this.services.users.cachedUser(id);
    if (user) this.usersNow.set(id, user);
    return user;
  }
  get walletTransactionById() {
    return this.byId('walletTransactions');
  }
  get walletTransactionByReference() {
    return this.byReference('walletTransactions');
  }
  get depositById() {
    return this.byId('deposits');
  }
  get depositByReference() {
    return this.byReference('deposits');
  }
  get payoutById() {
    return this.byId('payouts');
  }
  get payoutByReference() {
    return this.byReference('payouts');
  }
  get billRecordById() {
    return this.byId('billRecords');
  }
  get billRecordByReference() {
    return this.byReference('billRecords');
  }
  /** Deleted methods included: a deposit still names the card it was paid with. */
  get paymentMethodById() {
    return this.byId('paymentMethods');
  }
  get solanaTransferById() {
    return this.byId('solanaTransfers');
  }
  get offrampOrderById() {
    return this.byId('offrampOrders');
  }
  get offrampOrderByReference() {
    return this.byReference('offrampOrders');
  }
  get swapQuoteById(): DataLoader<string, SwapQuoteView | null> {
    return (
      this.found('swapQuoteById') ??
      this.keep(
        'swapQuoteById',
        new DataLoader<string, SwapQuoteView | null>(async (ids) => {
          const quotes = await this.services.recordLookups.swapQuotesByIds(this.owner, ids);
          const found = new Map(quotes.map((q) => [q.id, q.view]));
          return ids.map((id) => found.get(id) ?? null);
        }),
      )
    );
  }
  get businessById() {
    return (
      this.found<Business | null>('businessById') ??
      this.keep(
        'businessById',
        keyed(
          async (ids) => this.services.users.ownedBusinessesByIds(this.owner.userId, ids),
          (b) => b.id,
        ),
      )
    );
  }
  get businessCustomerById() {
    return (
      this.found<BusinessCustomerRow | null>('businessCustomerById') ??
      this.keep(
        'businessCustomerById',
        keyed(
          async (ids) => (this.principal ? this.services.customers.byIds(this.principal, ids) : []),
          (c) => c.id,
        ),
      )
    );
  }
  /** A money movement by its `source:uuid` key, from whichever table holds it. */
  get activityByKey(): DataLoader<string, Activity | null> {
    return (
      this.found('activityByKey') ??
      this.keep(
        'activityByKey',
        new DataLoader<string, Activity | null>(async (keys) =>
          Promise.all(
            keys.map(async (key) => {
              const parsed = parseActivityKey(key);
              if (!parsed) return null;
              if (parsed.source === 'wallet') {
                const row = await this.walletTransactionById.load(parsed.rowId);
                return row ? walletActivity(row) : null;
              }
              if (parsed.source === 'solana') {
                const row = await this.solanaTransferById.load(parsed.rowId);
                return row ? solanaActivity(row) : null;
              }
              const row = await this.offrampOrderById.load(parsed.rowId);
              return row ? offrampActivity(row) : null;
            }),
          ),
        ),
      )
    );
  }

  private byId<K extends RecordKind>(kind: K): DataLoader<string, RecordRow<K> | null> {
    const name = ID_LOADER[kind];
    return (
      this.found(name) ??
      this.keep(
        name,
        keyed<RecordRow<K>>(
          async (ids) => this.services.recordLookups.byIds(kind, this.owner, ids),
          (row) => row.id,
        ),
      )
    );
  }

  private byReference<K extends ReferencedKind>(kind: K): DataLoader<string, RecordRow<K> | null> {
    const name = REFERENCE_LOADER[kind];
    return (
      this.found(name) ??
      this.keep(
        name,
        keyed<RecordRow<K>>(
          async (refs) => this.services.recordLookups.byReferences(kind, this.owner, refs),
          (row) => row.reference,
        ),
      )
    );
  }

  /** The loader built under `name`, if any (checked before building, so a hit allocates nothing). */
  private found<V>(name: string): DataLoader<string, V> | undefined {
    return this.made.get(name) as DataLoader<string, V> | undefined;
  }

  private keep<V>(name: string, loader: DataLoader<string, V>): DataLoader<string, V> {
    this.made.set(name, loader as DataLoader<string, unknown>);
    return loader;
  }
}

/** A loader over a batch query that returns the rows it found, in any order. */
function keyed<Row>(load: (keys: readonly string[]) => Promise<Row[]>, keyOf: (row: Row) => string) {
  return new DataLoader<string, Row | null>(async (keys) => {
    const found = new Map((await load(keys)).map((row) => [keyOf(row), row]));
    return keys.map((key) => found.get(key) ?? null);
  });
}

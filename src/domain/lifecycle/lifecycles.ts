import { billRecords } from '../../db/bills-schema.js';
import { offrampOrders } from '../../db/offramp-schema.js';
import { deposits, payouts, walletTransactions } from '../../db/wallet-schema.js';
import type { MoneyEventKind } from '../events/payloads.js';
import { canMove, EVENT_OF_STATUS, OFFRAMP_STATUSES, type OfframpStatus } from '../offramp/catalogue.js';
import { CHAIN_SEND, SWAP } from './chain-sends.js';
import { eventData } from './event-data.js';

/** from → to → the events that move emits (empty: a legal move that tells nobody by itself). */
export type Moves<S extends string> = { readonly [F in S]: { readonly [T in S]?: readonly MoneyEventKind[] } };

/**
 * One kind of value-moving operation: its table, its statuses and the only moves between them.
 * `transition()` refuses every move not listed, so an illegal state change cannot be written.
 */
export interface Lifecycle<Row extends { status: string }> {
  readonly kind: string;
  /** Any Drizzle table with id, status and updatedAt columns (and version when `versioned`). */
  readonly table: any;
  readonly moves: Moves<Row['status']>;
  /** The `data` of this kind's events; absent for kinds whose events their own service writes. */
  readonly data?: (row: Row) => unknown;
  /** Whether the table keeps a version that each move bumps. */
  readonly versioned: boolean;
}

type RowOf<T extends { $inferSelect: unknown }> = T['$inferSelect'];

/** initiated → pending (a step awaited) → completed | failed; pending → pending is a new step (PIN, then OTP). */
export const DEPOSIT: Lifecycle<RowOf<typeof deposits>> = {
  kind: 'deposit',
  table: deposits,
  versioned: true,
  data: eventData.deposit,
  moves: {
    initiated: { pending: ['deposit.pending'], completed: ['deposit.completed'], failed: ['deposit.failed'] },
    pending: { pending: [], completed: ['deposit.completed'], failed: ['deposit.failed'] },
    completed: {},
    failed: {},
  },
};

/** initiated (held) → processing (the provider accepted it) → completed (captured) | failed (released). */
export const PAYOUT: Lifecycle<RowOf<typeof payouts>> = {
  kind: 'payout',
  table: payouts,
  versioned: true,
  data: eventData.payout,
  moves: {
    initiated: { processing: ['payout.processing'], completed: ['payout.completed'], failed: ['payout.failed'] },
    processing: { completed: ['payout.completed'], failed: ['payout.failed'] },
    completed: {},
    failed: {},
  },
};

/** PENDING (held, maybe sent) → SUCCESS (captured) | FAILED (released). */
export const BILL: Lifecycle<RowOf<typeof billRecords>> = {
  kind: 'bill',
  table: billRecords,
  versioned: true,
  data: eventData.bill,
  moves: {
    PENDING: { SUCCESS: ['bill.payment.successful'], FAILED: ['bill.payment.failed'] },
    SUCCESS: {},
    FAILED: {},
  },
};

/**
 * A wallet transaction: what the partner's transaction list shows for every operation above, and
 * the whole of a P2P transfer (born COMPLETED with its postings, so it never moves).
 */
export const TRANSACTION: Lifecycle<RowOf<typeof walletTransactions>> = {
  kind: 'transaction',
  table: walletTransactions,
  versioned: true,
  data: (row) => eventData.transaction(row),
  moves: {
    PENDING: { COMPLETED: ['transaction.completed'], FAILED: ['transaction.failed'] },
    COMPLETED: {},
    FAILED: {},
  },
};

/** Forward only along the happy path, or to a failure from any open state (catalogue.ts `canMove`). */
export const OFFRAMP_ORDER: Lifecycle<RowOf<typeof offrampOrders>> = {
  kind: 'offramp_order',
  table: offrampOrders,
  versioned: true,
  data: eventData.offramp,
  moves: Object.fromEntries(
    OFFRAMP_STATUSES.map((from) => [
      from,
      Object.fromEntries(
        OFFRAMP_STATUSES.filter((to) => canMove(from, to)).map((to) => [to, [EVENT_OF_STATUS[to] as MoneyEventKind]]),
      ),
    ]),
  ) as unknown as Moves<OfframpStatus>,
};

export { CHAIN_SEND, SWAP };

export const LIFECYCLES = [DEPOSIT, PAYOUT, BILL, TRANSACTION, OFFRAMP_ORDER, CHAIN_SEND, SWAP] as const;

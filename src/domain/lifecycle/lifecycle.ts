import type { MoneyEventKind } from '../events/payloads.js';

/**
 * The shape of a state table. Each domain writes its own beside its code (wallet/deposit-lifecycle.ts,
 * bills/bill-lifecycle.ts, solana/chain-sends.ts, …) and `transition()` moves any of them; this
 * folder knows no domain, so a state table is read where its operation is written.
 */

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

/** The row type of a Drizzle table, for `Lifecycle<RowOf<typeof table>>`. */
export type RowOf<T extends { $inferSelect: unknown }> = T['$inferSelect'];

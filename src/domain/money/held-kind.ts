import type { Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';

/**
 * What a held operation (money/held-operation.ts) is told by the domain that owns it: its state
 * table and what an outcome does to a row. Both of the operation's write paths (the transaction
 * of steps and the one statement) are written from this one description, so a change written one
 * way is the change written the other.
 */

/** The columns every operation paid from a hold keeps. */
export interface HeldRow {
  id: string;
  status: string;
  userId: string;
  environment: Environment;
  reference: string;
  /** The hold paying for it; null only for a bill whose scheduled run was refused before its hold. */
  holdId: string | null;
  /** Taken by the capture (to fees); the rest of the hold goes to provider clearing. */
  fee: bigint;
  version: number;
  updatedAt: Date;
}

/** What one outcome does to the row as it stands. */
export type HeldChange<Row extends HeldRow> =
  /** Final: the hold is captured (the operation happened) or released (it did not), and the row moves to `to`. */
  | { settle: 'capture' | 'release'; to: Row['status']; set: Partial<Row> }
  /** A move that keeps the hold (a payout the provider accepted): the wallet transaction shows `stage`. */
  | { keep: true; to: Row['status']; set: Partial<Row>; stage: string }
  /** No move: the provider's latest word is kept on the row (a bill still pending). */
  | { note: Partial<Row> }
  /** Nothing to write (already final, or already where the outcome would move it). */
  | { none: true };

export interface HeldKind<Row extends HeldRow, Outcome> {
  /** The state table: the row's Drizzle table, its statuses and the only moves between them, with their events. */
  lifecycle: Lifecycle<Row>;
  /** What a caller calls one when it is not found (`notFound(name)`). */
  name: string;
  /**
   * The columns a final move sets besides status, version and updated_at (the keys `change` puts
   * in `set` when it settles): the one statement's SET list is generated from them.
   */
  settleColumns: readonly (keyof Row & string)[];
  change(row: Row, outcome: Outcome): HeldChange<Row>;
}

/**
 * The wallet's half of a held operation: the PENDING wallet transaction the hold pays for. Given
 * by the wallet (wallet/held-wallet.ts), so money/ reads no domain's table or state table.
 */
export interface HeldWallet {
  /** Settles the wallet transaction the hold names (else the owner's of `reference`), with its event. */
  settle(
    tx: Executor,
    holdId: string,
    owner: { userId: string; environment: Environment },
    reference: string,
    to: 'COMPLETED' | 'FAILED',
    at: Date,
  ): Promise<unknown>;
  /** `transaction.updated` with the stage the operation reached (the transaction stays PENDING). */
  progress(
    tx: Executor,
    owner: { userId: string; environment: Environment },
    reference: string,
    stage: string,
    at: Date,
  ): Promise<void>;
  /** The one event of the transaction's move to `to`; undefined when the one statement cannot write that move. */
  settleEvent(to: 'COMPLETED' | 'FAILED'): string | undefined;
}

import { type ChainSendRow, chainSends } from '../../db/chain-schema.js';
import type { Executor } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import type { MoneyEventKind } from '../events/payloads.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';
import { IllegalTransition } from '../lifecycle/transition.js';
import type { KeyRef, KeyRow } from '../money/key-claim.js';

/**
 * A chain send of any family: signed, stored with its signed transaction, then sent; followed until
 * the chain confirms it, fails it, or it can no longer land. pending → confirmed | failed, each move
 * with its `transaction.*` event; where sends carry a nonce, also pending → replaced, when another
 * send with its nonce landed instead. A swap is a chain send whose quote executes once.
 */
export type ChainSendStatus = ChainSendRow['status'];

/** A chain send as the core's one table keeps it (src/db/chain-schema.ts), for every family. */
export type { ChainSendRow };

const SETTLES = { confirmed: ['transaction.completed'], failed: ['transaction.failed'] } as const;

/** A send without a nonce ends confirmed or failed. */
const MOVES = {
  pending: SETTLES,
  confirmed: {},
  failed: {},
  replaced: {},
} as const satisfies Record<ChainSendStatus, Partial<Record<ChainSendStatus, readonly MoneyEventKind[]>>>;

/**
 * A send with a nonce may also end replaced: its replacement (same nonce, `replaces` naming it)
 * landed, so it never will. What it held is released, and it is told as a failure, since nothing it
 * asked for happened; the replacement carries the transfer.
 */
const REPLACEABLE_MOVES = {
  ...MOVES,
  pending: { ...SETTLES, replaced: ['transaction.failed'] },
} as const satisfies Record<ChainSendStatus, Partial<Record<ChainSendStatus, readonly MoneyEventKind[]>>>;

/** The state tables of one family's chain sends and swaps, on chain_sends. */
export interface ChainSendLifecycles<Row extends ChainSendRow> {
  send: Lifecycle<Row>;
  /** A sandbox swap runs and is recorded in one commit, so it is born `confirmed` and never moves. */
  swap: Lifecycle<Row>;
  of(row: Pick<Row, 'kind'>): Lifecycle<Row>;
}

/**
 * Every family's chain sends move along one table, chain_sends; a family names its event data and
 * whether its sends carry a nonce (and so can be replaced).
 */
export function chainSendLifecycles<Row extends ChainSendRow = ChainSendRow>(
  data: (row: Row) => unknown,
  options: { replaceable: boolean },
): ChainSendLifecycles<Row> {
  const moves = options.replaceable ? REPLACEABLE_MOVES : MOVES;
  const send: Lifecycle<Row> = { kind: 'chain_send', table: chainSends, versioned: false, data, moves };
  const swap: Lifecycle<Row> = { ...send, kind: 'swap' };
  return { send, swap, of: (row) => (row.kind === 'swap' ? swap : send) };
}

/** A key to answer with `response` in the commit of a move, when the move happens; `answered` is set when it was. */
export interface KeyAnswer {
  key: KeyRef;
  response: unknown;
  answered?: boolean;
}

/** One move of a send, as its store writes it in one statement. */
export interface ChainSendMove<Row extends ChainSendRow> {
  /** The lifecycle's kind, named in the move's history row. */
  kind: string;
  to: Row['status'];
  error: string | null;
  at: Date;
  event?: string;
  answer?: KeyAnswer;
  /** The caller settled the send's holds in this transaction already (by what the chain took). */
  holdsSettled?: boolean;
}

/**
 * A signed send to record under the wallet's lock, after its holds were placed in the asset ledger
 * in the same transaction (assets/asset-holds.ts): everything its row keeps.
 */
export interface SendRecord<Row extends ChainSendRow> {
  row: Row;
  confirmAt: Date;
  key: KeyRef | null;
  leaseUntil: Date;
}

export type Recorded = { recorded: true; keyed: boolean };

/** Where a family keeps its chain sends: every write of the send path, each one statement. */
export interface ChainSendStore<Row extends ChainSendRow> {
  findTransfer(db: Executor, id: string): Promise<Row | undefined>;
  findOwnedByHash(db: Executor, principal: Principal, hash: string): Promise<Row | undefined>;
  findPendingByHash(db: Executor, hash: string): Promise<Row | undefined>;
  listOwned(db: Executor, principal: Principal, limit: number): Promise<Row[]>;
  /** Claims the key and, when fresh (or keyless), locks the wallet's row. */
  claimAndLock(tx: Executor, key: KeyRef | null, walletId: string, now: Date): Promise<KeyRow>;
  /** Records a signed send with its event, confirmation job and key (its holds are placed before). */
  record(tx: Executor, send: SendRecord<Row>): Promise<Recorded>;
  answer(db: Executor, key: KeyRef, response: unknown): Promise<void>;
  /** Moves `row` from the status it was read in; undefined when a racing move got there first. */
  move(tx: Executor, row: Row, move: ChainSendMove<Row>): Promise<Row | undefined>;
  /** The send after sending; when confirmed, its key (if any) is answered with `confirmedAnswer`. */
  afterSend(
    db: Executor,
    id: string,
    key: KeyRef | null,
    confirmedAnswer: unknown,
  ): Promise<{ row: Row; answered: boolean }>;
}

/**
 * `transition()` for chain sends and swaps, in one statement on the send path: refuses a move the
 * kind's table does not list (IllegalTransition, before anything is written), updates only while
 * the send is still in the status `row` was read in (of two racing moves one wins, the other gets
 * undefined), keeps the move in operation_transitions, records the move's event from the table,
 * and drops the send's confirmation job, which has nothing left to follow. `row` is the send as
 * read; the answer is the moved row. `changes.answer` is a key answered in the same statement when
 * the move happens.
 */
export async function transitionChainSend<Row extends ChainSendRow>(
  store: Pick<ChainSendStore<Row>, 'move'>,
  lifecycles: ChainSendLifecycles<Row>,
  tx: Executor,
  row: Row,
  to: Row['status'],
  at: Date,
  changes: { error?: string | null; answer?: KeyAnswer; holdsSettled?: boolean } = {},
): Promise<Row | undefined> {
  const lifecycle = lifecycles.of(row);
  const events = lifecycle.moves[row.status as Row['status']]?.[to];
  if (events === undefined) throw new IllegalTransition(lifecycle.kind, row.status, to);
  if (events.length > 1) throw new Error(`A ${lifecycle.kind} move emits at most one event.`);
  return store.move(tx, row, {
    kind: lifecycle.kind,
    to,
    error: changes.error ?? row.error,
    at,
    event: events[0],
    answer: changes.answer,
    holdsSettled: changes.holdsSettled,
  });
}

import type { Executor } from '../../db/client.js';
import { solanaTransfers } from '../../db/solana-schema.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';
import { IllegalTransition } from '../lifecycle/transition.js';
import { transferEventData } from './transfer-events.js';
import { type KeyAnswer, transferStore } from './transfer-store.js';

type ChainSendRow = typeof solanaTransfers.$inferSelect;

/**
 * A Solana send (SOL or token), stored signed before it is sent: pending → confirmed | failed,
 * each move with its `transaction.*` event (the chain's fields: signature, network, amounts).
 * Born `pending` with `transaction.created`, which the service writes with the record.
 */
export const CHAIN_SEND: Lifecycle<ChainSendRow> = {
  kind: 'chain_send',
  table: solanaTransfers,
  versioned: false,
  data: transferEventData,
  moves: {
    pending: { confirmed: ['transaction.completed'], failed: ['transaction.failed'] },
    confirmed: {},
    failed: {},
  },
};

/**
 * A swap: a chain send of kind `swap` whose quote is executed once; pending → confirmed | failed.
 * A sandbox swap runs and is recorded in one commit, so it is born `confirmed` and never moves.
 */
export const SWAP: Lifecycle<ChainSendRow> = { ...CHAIN_SEND, kind: 'swap' };

/** The lifecycle of a stored outgoing Solana transaction, by its kind. */
export const chainSendLifecycle = (row: Pick<ChainSendRow, 'kind'>): Lifecycle<ChainSendRow> =>
  row.kind === 'swap' ? SWAP : CHAIN_SEND;

/**
 * `transition()` for chain sends and swaps, in one statement on the send path: refuses a move the
 * kind's table does not list (IllegalTransition, before anything is written), updates only while
 * the send is still in the status `row` was read in (of two racing moves one wins, the other gets
 * undefined), keeps the move in operation_transitions, records the move's event from the table,
 * and drops the send's confirmation job, which has nothing left to
 * follow. `row` is the send as read; the answer is the moved row. `changes.answer` is a key answered
 * in the same statement when the move happens.
 */
export async function transitionChainSend(
  tx: Executor,
  row: ChainSendRow,
  to: ChainSendRow['status'],
  at: Date,
  changes: { error?: string | null; answer?: KeyAnswer } = {},
): Promise<ChainSendRow | undefined> {
  const lifecycle = chainSendLifecycle(row);
  const events = lifecycle.moves[row.status]?.[to];
  if (events === undefined) throw new IllegalTransition(lifecycle.kind, row.status, to);
  if (events.length > 1) throw new Error(`A ${lifecycle.kind} move emits at most one event.`);
  return transferStore.move(tx, row, {
    kind: lifecycle.kind,
    to,
    error: changes.error ?? row.error,
    at,
    event: events[0],
    answer: changes.answer,
  });
}

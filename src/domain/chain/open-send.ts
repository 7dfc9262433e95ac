import type { Database, Executor } from '../../db/client.js';
import { replay, toStorable } from '../idempotency/idempotency.js';
import { claimOf, isRefusal, type KeyRef, type KeyRow, refuseKey, retryOnKeyRace } from '../money/key-claim.js';
import type { ChainSendRow, ChainSendStore } from './chain-sends.js';

/**
 * Opens a chain send of any family under its Idempotency-Key, in one transaction: the key first (a
 * twin in flight is 409 at once), then the wallet's row, so one wallet's sends spend its balance
 * one at a time; then the family's `open` (hold, sign where the nonce must be fixed first, record).
 *
 * Answers `{ done }` when the key already answers: a replay, a send recorded by a process that died
 * before answering (the record as it stands, answered now), or a refusal the key keeps. Answers
 * undefined when `open` recorded the send, which the family then sends. A key taken by a twin
 * between the claim and the record (`open` throws KeyRaceError) is tried once more.
 */
export async function openKeyedChainSend<View, Row extends ChainSendRow>(
  db: Database,
  o: {
    store: Pick<ChainSendStore<Row>, 'claimAndLock' | 'findTransfer' | 'answer'>;
    key: KeyRef | null;
    walletId: string;
    now: Date;
    /** The answer a recorded send gives. */
    view: (row: Row) => View | Promise<View>;
    open: (tx: Executor) => Promise<void>;
  },
): Promise<{ done: View } | undefined> {
  let claimed = false;
  try {
    return await retryOnKeyRace(() => {
      claimed = false;
      return db.transaction(async (tx): Promise<{ done: View } | undefined> => {
        const claimRow = await o.store.claimAndLock(tx, o.key, o.walletId, o.now);
        if (o.key) {
          const ended = await endedSendOf(tx, o.store, claimRow, o.key.requestHash);
          if (ended) {
            // Its process may have died before answering; the send's end is the answer either way.
            const current = await o.view(ended);
            await o.store.answer(tx, o.key, { result: toStorable(current) });
            return { done: current };
          }
          const claim = claimOf(claimRow, o.key.requestHash);
          if ('replay' in claim) return { done: replay<View>(claim.replay) };
          if ('resume' in claim && claim.resume) {
            // Its process died after recording: the record, as it stands, is the answer.
            const current = await o.view((await o.store.findTransfer(tx, claim.resume))!);
            await o.store.answer(tx, o.key, { result: toStorable(current) });
            return { done: current };
          }
        }
        claimed = true;
        await o.open(tx);
        return undefined;
      });
    });
  } catch (error) {
    if (claimed && o.key && isRefusal(error)) {
      const prior = await refuseKey(db, o.key, error, o.now);
      if (prior) return { done: replay<View>(prior) };
    }
    throw error;
  }
}

/**
 * The send a key in flight recorded, when that send has ended (confirmed, failed or replaced):
 * whatever its request is doing, nothing it could still do changes the send, so a retry need not
 * wait out the lease (a process killed after recording leaves the key in flight until then, while
 * the confirmation job ends the send). Undefined for anything else, which `claimOf` judges.
 */
async function endedSendOf<Row extends ChainSendRow>(
  tx: Executor,
  store: Pick<ChainSendStore<Row>, 'findTransfer'>,
  row: KeyRow,
  requestHash: string,
): Promise<Row | undefined> {
  if (!row.locked || row.status !== 'running' || row.request_hash !== requestHash || !row.resource_id) return undefined;
  const send = await store.findTransfer(tx, row.resource_id);
  return send && send.status !== 'pending' ? send : undefined;
}

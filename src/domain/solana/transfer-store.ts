import type { Executor } from '../../db/client.js';
import { statement } from '../../db/plain-sql.js';
import { solanaTransfers } from '../../db/solana-schema.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Principal } from '../auth/principal.js';
import { laneOf } from '../jobs/lanes.js';
import { type KeyRef, type KeyRow, keyLockId } from '../money/key-claim.js';
import { claimCtes } from '../money/plain-write.js';
import type { ChainSendMove, ChainSendStore, KeyAnswer, Recorded, SendRecord } from '../chain/chain-sends.js';
import { runIn } from '../../db/plain-sql.js';
import { TRANSFER_EVENT_TYPE, transferEventData } from './transfer-events.js';

export type SolanaTransferRow = typeof solanaTransfers.$inferSelect;

/** The job that follows a stored transaction until it is final (re-broadcasts, expiry); its id is the transfer's. */
export const CONFIRM_JOB = 'solana.confirm';

const COLUMNS = `id, user_id, environment, network, kind, from_address, to_address, mint, amount_raw::text as amount_raw,
  decimals, fee_lamports::text as fee_lamports, output_mint, output_amount_raw::text as output_amount_raw, signature,
  wire, last_valid_block_height::text as last_valid_block_height, status, error, quote_id, created_at, updated_at`;

type Raw = Record<string, unknown>;
const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));

/** A row as the plain statements return it, as Drizzle would (bigints, dates). */
export function rowOf(r: Raw): SolanaTransferRow {
  return {
    id: r['id'] as string,
    userId: r['user_id'] as string,
    environment: r['environment'] as SolanaTransferRow['environment'],
    network: r['network'] as string,
    kind: r['kind'] as SolanaTransferRow['kind'],
    fromAddress: r['from_address'] as string,
    toAddress: r['to_address'] as string,
    mint: (r['mint'] as string | null) ?? null,
    amountRaw: BigInt(r['amount_raw'] as string),
    decimals: Number(r['decimals']),
    feeLamports: BigInt(r['fee_lamports'] as string),
    outputMint: (r['output_mint'] as string | null) ?? null,
    outputAmountRaw: r['output_amount_raw'] == null ? null : BigInt(r['output_amount_raw'] as string),
    signature: r['signature'] as string,
    wire: r['wire'] as string,
    lastValidBlockHeight: BigInt(r['last_valid_block_height'] as string),
    status: r['status'] as SolanaTransferRow['status'],
    error: (r['error'] as string | null) ?? null,
    quoteId: (r['quote_id'] as string | null) ?? null,
    createdAt: date(r['created_at']),
    updatedAt: date(r['updated_at']),
  };
}

const FIND = statement('solana_transfer_find_v1', `select ${COLUMNS} from solana_transfers where id = $1::uuid`);
const BY_SIGNATURE = statement(
  'solana_transfer_by_signature_v1',
  `select ${COLUMNS} from solana_transfers
   where user_id = $1::uuid and environment = $2::environment and signature = $3::text`,
);
const PENDING_BY_SIGNATURE = statement(
  'solana_transfer_pending_by_signature_v1',
  `select ${COLUMNS} from solana_transfers where signature = $1::text and status = 'pending'`,
);
const LIST = statement(
  'solana_transfer_list_v1',
  `select ${COLUMNS} from solana_transfers where user_id = $1::uuid and environment = $2::environment
   order by created_at desc limit $3::int`,
);

/**
 * The first statement of a send's transaction: the Idempotency-Key's claim (a transaction-scoped
 * advisory lock on its hash, and its row: money/key-claim.ts) and, when the key is fresh (or there
 * is none), the wallet's row lock, so one wallet's sends are checked one at a time. One round trip.
 */
const CLAIM_AND_LOCK = statement(
  'solana_send_claim_v1',
  `with ${claimCtes({ lockId: '$1', userId: '$2', environment: '$3', operation: '$4', key: '$5', now: '$6' })},
  wallet as (
    select id from solana_wallets where id = $7::uuid and exists (select 1 from go) for update
  )
  select (select ok from claim) as locked, p.status, p.request_hash, p.response, p.resource_id, p.lease_over,
    (select count(*) from wallet)::int as wallet
  from (select 1) one left join prior p on true`,
);

/**
 * The second (and last) statement of a send's transaction, after the wallet's lock: what the
 * wallet's pending sends hold (a new snapshot, so every send committed before the lock counts),
 * and, only when the chain balance less those holds covers this one, the signed transaction, its
 * `transaction.created` event (fanned out to webhook deliveries by the relay), the confirmation job
 * (its id is the transfer's, so the commit that settles the send can drop it) and the key,
 * `running` with the transfer attached. Answers the holds, and whether it recorded and keyed.
 */
const RECORD = statement(
  'solana_send_record_v3',
  `with held as (
    select coalesce(sum(amount_raw) filter (where mint is null), 0) + coalesce(sum(fee_lamports), 0) as sol,
      coalesce(sum(amount_raw) filter (where mint = $5::text), 0) as token
    from solana_transfers where from_address = $1::text and network = $2::text and status = 'pending'
  ),
  ok as (
    select ($3::numeric - held.sol >= $4::numeric) and ($5::text is null or $6::numeric - held.token >= $7::numeric) as ok
    from held
  ),
  inserted as (
    insert into solana_transfers (id, user_id, environment, network, kind, from_address, to_address, mint, amount_raw,
      decimals, fee_lamports, output_mint, output_amount_raw, signature, wire, last_valid_block_height, status,
      quote_id, created_at, updated_at)
    select $8::uuid, $9::uuid, $10::environment, $2::text, $11::solana_transfer_kind, $1::text, $12::text, $5::text,
      $7::numeric, $13::int, $14::bigint, $15::text, $16::numeric, $17::text, $18::text, $19::bigint, 'pending',
      $20::uuid, $21::timestamptz, $21::timestamptz
    from ok where ok.ok
    returning id
  ),
  event as (
    insert into events (type, user_id, environment, data, created_at, trace_context)
    select '${TRANSFER_EVENT_TYPE.pending}', $9::uuid, $10::environment, $22::jsonb, $21::timestamptz,
      nullif($23::jsonb, '{}'::jsonb)
    from inserted
  ),
  confirm as (
    insert into jobs (id, kind, lane, tenant, payload, run_at)
    select inserted.id, '${CONFIRM_JOB}', '${laneOf(CONFIRM_JOB)}', $9::text,
      jsonb_build_object('transferId', inserted.id::text) || $23::jsonb, $24::timestamptz
    from inserted
  ),
  keyed as (
    insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, resource_id, locked_until)
    select $9::uuid, $10::environment, $25::text, $26::text, $27::text, 'running', inserted.id, $28::timestamptz
    from inserted where $26::text is not null
    on conflict (user_id, environment, operation, key) do update
      set resource_id = excluded.resource_id, locked_until = excluded.locked_until
      where idempotency_keys.status = 'running' and idempotency_keys.locked_until < $21::timestamptz
    returning 1
  )
  select held.sol::text as sol, held.token::text as token, (select count(*) from inserted)::int as recorded,
    (select count(*) from keyed)::int as keyed
  from held`,
);

const ANSWER = statement(
  'solana_send_answer_v1',
  `update idempotency_keys set status = 'done', response = $5::jsonb, locked_until = null
   where user_id = $1::uuid and environment = $2::environment and operation = $3::text and key = $4::text
     and status = 'running'`,
);

/**
 * One move of a pending send's lifecycle (src/domain/chain/chain-sends.ts), as ONE statement:
 * the guarded status update (of two racing moves one matches), its history row, its event, and
 * the confirmation job dropped (nothing left to follow;
 * one a worker holds is left to find the send final). Everything depends on the update.
 */
const MOVE = statement(
  'solana_send_move_v3',
  `with moved as (
    update solana_transfers set status = $2::solana_transfer_status, error = $3::text, updated_at = $4::timestamptz
    where id = $1::uuid and status = $5::solana_transfer_status
    returning id, user_id, environment
  ),
  history as (
    insert into operation_transitions (kind, operation_id, from_status, to_status, at)
    select $6::text, id, $5::text, $2::text, $4::timestamptz from moved
  ),
  event as (
    insert into events (type, user_id, environment, data, created_at, trace_context)
    select $7::text, user_id, environment, $8::jsonb, $4::timestamptz, nullif($9::jsonb, '{}'::jsonb)
    from moved where $7::text is not null
  ),
  dropped as (
    delete from jobs where id = $1::uuid and kind = '${CONFIRM_JOB}' and status = 'pending' and lease_token is null
      and exists (select 1 from moved)
  ),
  answered as (
    update idempotency_keys set status = 'done', response = $12::jsonb, locked_until = null
    where $11::text is not null and exists (select 1 from moved) and user_id = $13::uuid
      and environment = $14::environment and operation = $10::text and key = $11::text and status = 'running'
    returning 1
  )
  select count(*)::int as moved, (select count(*) from answered)::int as answered from moved`,
);

/**
 * A send as it stands after it was sent, and, when the chain has confirmed it (a chain that
 * executes what it receives records that with its own state), its key answered with `$6` (the
 * confirmed answer, which the caller knows in advance): one round trip for the usual case.
 */
const AFTER_SEND = statement(
  'solana_send_after_v1',
  `with t as (select ${COLUMNS} from solana_transfers where id = $1::uuid),
  answered as (
    update idempotency_keys set status = 'done', response = $6::jsonb, locked_until = null
    where $5::text is not null and user_id = $2::uuid and environment = $3::environment and operation = $4::text
      and key = $5::text and status = 'running' and (select status from t) = 'confirmed'
    returning 1
  )
  select t.*, (select count(*) from answered)::int as answered from t`,
);

/**
 * Sends this process is sending right now, by signature: the row as recorded (pending) and the key
 * to answer when the sandbox chain confirms it. The chain's commit moves the send from the row in
 * hand (no read by signature) and answers the key in that commit, so the sender commits nothing
 * after the send. A send re-broadcast by another process is found by its signature instead.
 */
export const sending = new Map<string, { row: SolanaTransferRow; answer?: KeyAnswer }>();

/**
 * SQL for outgoing Solana transactions, the core's chain-send store on solana_transfers (native
 * units: lamports); every query named by its function, written once as plain SQL.
 */
export const transferStore: ChainSendStore<SolanaTransferRow> = {
  async findTransfer(db: Executor, id: string): Promise<SolanaTransferRow | undefined> {
    const [row] = await runIn(db, FIND, [id]);
    return row ? rowOf(row) : undefined;
  },

  async findOwnedBySignature(
    db: Executor,
    principal: Principal,
    signature: string,
  ): Promise<SolanaTransferRow | undefined> {
    const [row] = await runIn(db, BY_SIGNATURE, [principal.userId, principal.environment, signature]);
    return row ? rowOf(row) : undefined;
  },

  /** The pending send with this signature, if there is one. */
  async findPendingBySignature(db: Executor, signature: string): Promise<SolanaTransferRow | undefined> {
    const [row] = await runIn(db, PENDING_BY_SIGNATURE, [signature]);
    return row ? rowOf(row) : undefined;
  },

  async listOwned(db: Executor, principal: Principal, limit: number): Promise<SolanaTransferRow[]> {
    return (await runIn(db, LIST, [principal.userId, principal.environment, limit])).map(rowOf);
  },

  /** Claims the key and, when fresh (or keyless), locks the wallet's row; see CLAIM_AND_LOCK. */
  async claimAndLock(tx: Executor, key: KeyRef | null, walletId: string, now: Date): Promise<KeyRow> {
    const [row] = await runIn<KeyRow>(tx, CLAIM_AND_LOCK, [
      key ? keyLockId(key.scope, key.key) : null,
      key?.scope.userId ?? null,
      key?.scope.environment ?? null,
      key?.scope.operation ?? null,
      key?.key ?? null,
      now.toISOString(),
      walletId,
    ]);
    return row!;
  },

  /** Records a signed send under the wallet's lock when its balance covers it; see RECORD. */
  async record(tx: Executor, send: SendRecord<SolanaTransferRow>): Promise<Recorded> {
    const { row, key } = send;
    const [result] = await runIn<{ sol: string; token: string; recorded: number; keyed: number }>(tx, RECORD, [
      row.fromAddress,
      row.network,
      send.nativeBalance.toString(),
      send.nativeNeeded.toString(),
      row.mint,
      send.tokenBalance.toString(),
      row.amountRaw.toString(),
      row.id,
      row.userId,
      row.environment,
      row.kind,
      row.toAddress,
      row.decimals,
      row.feeLamports.toString(),
      row.outputMint,
      row.outputAmountRaw?.toString() ?? null,
      row.signature,
      row.wire,
      row.lastValidBlockHeight.toString(),
      row.quoteId,
      row.createdAt.toISOString(),
      JSON.stringify(transferEventData(row)),
      traceContextJson(),
      send.confirmAt.toISOString(),
      key?.scope.operation ?? null,
      key?.key ?? null,
      key?.requestHash ?? null,
      send.leaseUntil.toISOString(),
    ]);
    if (result!.recorded > 0) return { recorded: true, keyed: result!.keyed > 0 };
    return { recorded: false, heldNative: BigInt(result!.sol), heldToken: BigInt(result!.token) };
  },

  /** The key of a send is `done` with its answer (one statement; nothing else commits with it). */
  async answer(db: Executor, key: KeyRef, response: unknown): Promise<void> {
    const { scope } = key;
    await runIn(db, ANSWER, [scope.userId, scope.environment, scope.operation, key.key, JSON.stringify(response)]);
  },

  /**
   * Moves `row` (as read, in its current status) to `to`: one statement (MOVE). `kind` names the
   * lifecycle in the history, `event` is the move's event (or none). Answers the moved row, or
   * undefined when a racing move got there first.
   */
  async move(
    tx: Executor,
    row: SolanaTransferRow,
    move: ChainSendMove<SolanaTransferRow>,
  ): Promise<SolanaTransferRow | undefined> {
    const moved: SolanaTransferRow = { ...row, status: move.to, error: move.error, updatedAt: move.at };
    const key = move.answer?.key;
    const [result] = await runIn<{ moved: number; answered: number }>(tx, MOVE, [
      row.id,
      move.to,
      move.error,
      move.at.toISOString(),
      row.status,
      move.kind,
      move.event ?? null,
      JSON.stringify(transferEventData(moved)),
      traceContextJson(),
      key?.scope.operation ?? null,
      key?.key ?? null,
      move.answer ? JSON.stringify(move.answer.response) : null,
      key?.scope.userId ?? null,
      key?.scope.environment ?? null,
    ]);
    if (move.answer) move.answer.answered = result!.answered > 0;
    return result!.moved > 0 ? moved : undefined;
  },

  /** The send after sending; when confirmed, its key (if any) is answered with `confirmedAnswer` (AFTER_SEND). */
  async afterSend(
    db: Executor,
    id: string,
    key: KeyRef | null,
    confirmedAnswer: unknown,
  ): Promise<{ row: SolanaTransferRow; answered: boolean }> {
    const [row] = await runIn<Raw & { answered: number }>(db, AFTER_SEND, [
      id,
      key?.scope.userId ?? null,
      key?.scope.environment ?? null,
      key?.scope.operation ?? null,
      key?.key ?? null,
      JSON.stringify(confirmedAnswer),
    ]);
    return { row: rowOf(row!), answered: row!.answered > 0 };
  },
};

/** Inserts a send as it is (a sandbox swap, recorded executed with the chain's new state). Not on the transfer path. */
export async function insertTransfer(
  db: Executor,
  row: typeof solanaTransfers.$inferInsert,
): Promise<SolanaTransferRow> {
  const [inserted] = await db.insert(solanaTransfers).values(row).returning();
  return inserted!;
}

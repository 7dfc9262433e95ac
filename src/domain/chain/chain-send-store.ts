import type { ChainSendRow, NewChainSend } from '../../db/chain-schema.js';
import { chainSends } from '../../db/chain-schema.js';
import type { Executor } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import { traceContextJson } from '../../observability/job-observation.js';
import type { Principal } from '../auth/principal.js';
import { laneOf } from '../jobs/lanes.js';
import { type KeyRef, type KeyRow, keyLockId } from '../money/key-claim.js';
import { claimCtes, runningKeyInsert } from '../money/plain-write.js';
import { assetHolds } from '../assets/asset-holds.js';
import type { ChainSendMove, ChainSendStore, Recorded, SendRecord } from './chain-sends.js';

/** What a family tells the core's store: its name, where its custodial wallets are, its confirmation job, its event data. */
export interface ChainSendFamily {
  /** `solana`, `evm`: the value of chain_sends.family for its rows. */
  family: string;
  /** The table of its custodial wallets (by id): a send locks its wallet's row, so one wallet's sends are checked one at a time. */
  walletTable: string;
  /** The job that follows a stored send until it is final; its id is the send's. */
  confirmJob: string;
  /** `data` of the send's `transaction.*` events, in the family's terms. */
  eventData(row: ChainSendRow): Record<string, unknown>;
}

/** The event a chain send's state is told by. */
export const CHAIN_SEND_EVENT = {
  pending: 'transaction.created',
  confirmed: 'transaction.completed',
  failed: 'transaction.failed',
  replaced: 'transaction.failed',
} as const satisfies Record<ChainSendRow['status'], string>;

const COLUMNS = `id, user_id, environment, family, network, kind, from_address, to_address, asset,
  amount_raw::text as amount_raw, decimals, fee_raw::text as fee_raw, output_asset,
  output_amount_raw::text as output_amount_raw, tx_hash, wire, valid_through_height::text as valid_through_height,
  nonce::text as nonce, block::text as block, confirmations, replaces, status, error, quote_id, created_at, updated_at`;

type Raw = Record<string, unknown>;
const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));
const big = (v: unknown) => (v == null ? null : BigInt(v as string));

/** A row as the plain statements return it, as Drizzle would (bigints, dates). */
export function chainSendOf(r: Raw): ChainSendRow {
  return {
    id: r['id'] as string,
    userId: r['user_id'] as string,
    environment: r['environment'] as ChainSendRow['environment'],
    family: r['family'] as string,
    network: r['network'] as string,
    kind: r['kind'] as ChainSendRow['kind'],
    fromAddress: r['from_address'] as string,
    toAddress: r['to_address'] as string,
    asset: (r['asset'] as string | null) ?? null,
    amountRaw: BigInt(r['amount_raw'] as string),
    decimals: Number(r['decimals']),
    feeRaw: BigInt(r['fee_raw'] as string),
    outputAsset: (r['output_asset'] as string | null) ?? null,
    outputAmountRaw: big(r['output_amount_raw']),
    txHash: r['tx_hash'] as string,
    wire: r['wire'] as string,
    validThroughHeight: big(r['valid_through_height']),
    nonce: big(r['nonce']),
    block: big(r['block']),
    confirmations: Number(r['confirmations']),
    replaces: (r['replaces'] as string | null) ?? null,
    status: r['status'] as ChainSendRow['status'],
    error: (r['error'] as string | null) ?? null,
    quoteId: (r['quote_id'] as string | null) ?? null,
    createdAt: date(r['created_at']),
    updatedAt: date(r['updated_at']),
  };
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,40}$/;

/**
 * The core's store of chain sends on chain_sends, for one family: every write of the send path,
 * each ONE plain statement (named per family, so each family's statements are prepared apart).
 * What a send holds is the asset ledger's (assets/asset-holds.ts), settled here with the send's end.
 */
export function chainSendStore(of: ChainSendFamily): ChainSendStore<ChainSendRow> {
  const { family, walletTable, confirmJob } = of;
  if (!IDENTIFIER.test(family) || !IDENTIFIER.test(walletTable))
    throw new Error('A family and its wallet table are plain names.');
  const named = (what: string, text: string) => statement(`${family}_${what}`, text);

  const FIND = named('send_find_v2', `select ${COLUMNS} from chain_sends where id = $1::uuid and family = '${family}'`);
  const BY_HASH = named(
    'send_by_hash_v2',
    `select ${COLUMNS} from chain_sends
     where family = '${family}' and tx_hash = $3::text and user_id = $1::uuid and environment = $2::environment`,
  );
  const PENDING_BY_HASH = named(
    'send_pending_by_hash_v2',
    `select ${COLUMNS} from chain_sends where family = '${family}' and tx_hash = $1::text and status = 'pending'`,
  );
  const LIST = named(
    'send_list_v2',
    `select ${COLUMNS} from chain_sends where user_id = $1::uuid and environment = $2::environment and family = '${family}'
     order by created_at desc limit $3::int`,
  );

  /**
   * The first statement of a send's transaction: the Idempotency-Key's claim (a transaction-scoped
   * advisory lock on its hash, and its row: money/key-claim.ts) and, when the key is fresh (or there
   * is none), the wallet's row lock, so one wallet's sends are checked one at a time. One round trip.
   */
  const CLAIM_AND_LOCK = named(
    'send_claim_v2',
    `with ${claimCtes({ lockId: '$1', userId: '$2', environment: '$3', operation: '$4', key: '$5', now: '$6' })},
    wallet as (
      select id from ${walletTable} where id = $7::uuid and exists (select 1 from go) for update
    )
    select (select ok from claim) as locked, p.status, p.request_hash, p.response, p.resource_id, p.lease_over,
      (select count(*) from wallet)::int as wallet
    from (select 1) one left join prior p on true`,
  );

  /**
   * The second (and last) statement of a send's transaction, after the wallet's lock and its holds
   * (assets/asset-holds.ts, placed in this transaction against the asset ledger): the signed
   * transaction, its `transaction.created` event (fanned out to webhook deliveries by the relay),
   * the confirmation job (its id is the send's, so the commit that settles the send can drop it)
   * and the key, `running` with the send attached. Answers whether it keyed.
   */
  const RECORD = named(
    'send_record_v5',
    `with inserted as (
      insert into chain_sends (id, user_id, environment, family, network, kind, from_address, to_address, asset,
        amount_raw, decimals, fee_raw, output_asset, output_amount_raw, tx_hash, wire, valid_through_height, nonce,
        replaces, status, quote_id, created_at, updated_at)
      values ($5::uuid, $6::uuid, $7::environment, '${family}', $2::text, $8::chain_send_kind, $1::text, $9::text,
        $3::text, $4::numeric, $10::int, $11::numeric, $12::text, $13::numeric, $14::text, $15::text, $16::bigint,
        $26::bigint, $27::uuid, 'pending', $17::uuid, $18::timestamptz, $18::timestamptz)
      returning id
    ),
    event as (
      insert into events (type, user_id, environment, data, created_at, trace_context)
      select '${CHAIN_SEND_EVENT.pending}', $6::uuid, $7::environment, $19::jsonb, $18::timestamptz,
        nullif($20::jsonb, '{}'::jsonb)
      from inserted
    ),
    confirm as (
      insert into jobs (id, kind, lane, tenant, payload, run_at)
      select inserted.id, '${confirmJob}', '${laneOf(confirmJob)}', $6::text,
        jsonb_build_object('transferId', inserted.id::text) || $20::jsonb, $21::timestamptz
      from inserted
    ),
    keyed as (
      ${runningKeyInsert(
        {
          userId: '$6',
          environment: '$7',
          operation: '$22',
          key: '$23',
          requestHash: '$24',
          resourceId: '$5',
          leaseUntil: '$25',
        },
        'exists (select 1 from inserted)',
        '$18',
      )}
      returning 1
    )
    select (select count(*) from inserted)::int as recorded, (select count(*) from keyed)::int as keyed`,
  );

  const ANSWER = named(
    'send_answer_v2',
    `update idempotency_keys set status = 'done', response = $5::jsonb, locked_until = null
     where user_id = $1::uuid and environment = $2::environment and operation = $3::text and key = $4::text
       and status = 'running'`,
  );

  /**
   * One move of a pending send's lifecycle (chain-sends.ts), as ONE statement: the guarded status
   * update (of two racing moves one matches), its history row, its event, and the confirmation job
   * dropped (nothing left to follow; one a worker holds is left to find the send final).
   * Everything depends on the update.
   */
  const MOVE = named(
    'send_move_v4',
    `with moved as (
      update chain_sends set status = $2::chain_send_status, error = $3::text, updated_at = $4::timestamptz
      where id = $1::uuid and family = '${family}' and status = $5::chain_send_status
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
      delete from jobs where id = $1::uuid and kind = '${confirmJob}' and status = 'pending' and lease_token is null
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
  const AFTER_SEND = named(
    'send_after_v2',
    `with t as (select ${COLUMNS} from chain_sends where id = $1::uuid and family = '${family}'),
    answered as (
      update idempotency_keys set status = 'done', response = $6::jsonb, locked_until = null
      where $5::text is not null and user_id = $2::uuid and environment = $3::environment and operation = $4::text
        and key = $5::text and status = 'running' and (select status from t) = 'confirmed'
      returning 1
    )
    select t.*, (select count(*) from answered)::int as answered from t`,
  );

  return {
    async findTransfer(db, id) {
      const [row] = await runIn(db, FIND, [id]);
      return row ? chainSendOf(row) : undefined;
    },

    async findOwnedByHash(db, principal: Principal, hash) {
      const [row] = await runIn(db, BY_HASH, [principal.userId, principal.environment, hash]);
      return row ? chainSendOf(row) : undefined;
    },

    async findPendingByHash(db, hash) {
      const [row] = await runIn(db, PENDING_BY_HASH, [hash]);
      return row ? chainSendOf(row) : undefined;
    },

    async listOwned(db, principal, limit) {
      return (await runIn(db, LIST, [principal.userId, principal.environment, limit])).map(chainSendOf);
    },

    async claimAndLock(tx, key: KeyRef | null, walletId, now): Promise<KeyRow> {
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

    async record(tx, send: SendRecord<ChainSendRow>): Promise<Recorded> {
      const { row, key } = send;
      if (row.family !== family) throw new Error(`A ${row.family} send recorded by the ${family} store.`);
      const [result] = await runIn<{ recorded: number; keyed: number }>(tx, RECORD, [
        row.fromAddress,
        row.network,
        row.asset,
        row.amountRaw.toString(),
        row.id,
        row.userId,
        row.environment,
        row.kind,
        row.toAddress,
        row.decimals,
        row.feeRaw.toString(),
        row.outputAsset,
        row.outputAmountRaw?.toString() ?? null,
        row.txHash,
        row.wire,
        row.validThroughHeight?.toString() ?? null,
        row.quoteId,
        row.createdAt.toISOString(),
        JSON.stringify(of.eventData(row)),
        traceContextJson(),
        send.confirmAt.toISOString(),
        key?.scope.operation ?? null,
        key?.key ?? null,
        key?.requestHash ?? null,
        send.leaseUntil.toISOString(),
        row.nonce?.toString() ?? null,
        row.replaces,
      ]);
      return { recorded: true, keyed: result!.keyed > 0 };
    },

    async answer(db, key, response) {
      const { scope } = key;
      await runIn(db, ANSWER, [scope.userId, scope.environment, scope.operation, key.key, JSON.stringify(response)]);
    },

    async move(tx, row, move: ChainSendMove<ChainSendRow>) {
      const moved: ChainSendRow = { ...row, status: move.to, error: move.error, updatedAt: move.at };
      const key = move.answer?.key;
      const [result] = await runIn<{ moved: number; answered: number }>(tx, MOVE, [
        row.id,
        move.to,
        move.error,
        move.at.toISOString(),
        row.status,
        move.kind,
        move.event ?? null,
        JSON.stringify(of.eventData(moved)),
        traceContextJson(),
        key?.scope.operation ?? null,
        key?.key ?? null,
        move.answer ? JSON.stringify(move.answer.response) : null,
        key?.scope.userId ?? null,
        key?.scope.environment ?? null,
      ]);
      if (move.answer) move.answer.answered = result!.answered > 0;
      if (result!.moved === 0) return undefined;
      // Its holds end with it, once: spent as held when it landed (unless the chain's commit already
      // captured them by what it took), given back when it never can.
      if (move.holdsSettled) return moved;
      await assetHolds.settle(
        tx,
        { sendId: row.id },
        move.to === 'confirmed' ? { capture: new Map() } : { release: true },
        move.at,
      );
      return moved;
    },

    async afterSend(db, id, key, confirmedAnswer) {
      const [row] = await runIn<Raw & { answered: number }>(db, AFTER_SEND, [
        id,
        key?.scope.userId ?? null,
        key?.scope.environment ?? null,
        key?.scope.operation ?? null,
        key?.key ?? null,
        JSON.stringify(confirmedAnswer),
      ]);
      return { row: chainSendOf(row!), answered: row!.answered > 0 };
    },
  };
}

/** Inserts a send as it is (a sandbox swap, recorded executed with the chain's new state). Not on the transfer path. */
export async function insertChainSend(db: Executor, row: NewChainSend): Promise<ChainSendRow> {
  const [inserted] = await db.insert(chainSends).values(row).returning();
  return inserted!;
}

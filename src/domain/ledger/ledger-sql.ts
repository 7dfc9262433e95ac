import { type Statement, statement } from '../../db/plain-sql.js';

/**
 * The ledger's rules as SQL, written once: every statement that writes postings, entries or holds
 * (a transfer, a bill's open and settle, a payout's settle, and the ledger's own hold, capture and
 * release inside a caller's transaction) is built from these pieces, so no two copies can drift.
 * `p` names the SQL parameters (placeholders such as `$6`) of the statement they go into.
 */

/**
 * A guarded move between two accounts, posted: `locked` (both rows, in id order, once `go` has a
 * row: the contended rows first, and no deadlock between A→B and B→A), `moved` (the debit of `from`
 * and the credit of `to`, only when `from` may go negative or holds `amount`; its rows carry each
 * account's new balance), `entries` (the two entries with the balances after) and `posting`. Every
 * later write of the statement depends on `moved`, so too little money writes nothing.
 */
export const guardedMoveCtes = (p: {
  from: string;
  to: string;
  amount: string;
  posting: string;
  environment: string;
  kind: string;
  reference: string;
  description: string;
}) => `locked as (
    select id, balance, allow_negative from ledger_accounts
    where id in (${p.from}::uuid, ${p.to}::uuid) and exists (select 1 from go)
    order by id
    for update
  ),
  moved as (
    update ledger_accounts a
    set balance = a.balance + case when a.id = ${p.from}::uuid then -${p.amount}::bigint else ${p.amount}::bigint end
    from locked l
    where a.id = l.id
      and exists (select 1 from locked s where s.id = ${p.from}::uuid and (s.allow_negative or s.balance >= ${p.amount}::bigint))
    returning a.id, a.balance
  ),
  entries as (
    insert into ledger_entries (posting_id, account_id, amount, balance_after)
    select ${p.posting}::uuid, m.id, case when m.id = ${p.from}::uuid then -${p.amount}::bigint else ${p.amount}::bigint end, m.balance
    from moved m
  ),
  posting as (
    insert into ledger_postings (id, environment, kind, reference, description)
    select ${p.posting}::uuid, ${p.environment}::environment, ${p.kind}, ${p.reference}, ${p.description}
    where exists (select 1 from moved)
  )`;

/**
 * A hold placed: the guarded move of `amount` from the user's wallet into their holds account,
 * posted as `hold` (reference the hold's id), and the hold itself, naming the wallet transaction it
 * pays for (null for none) and its expiry (null for none). Written only when the wallet had the money.
 */
export const holdPlacementCtes = (p: {
  holdId: string;
  environment: string;
  userId: string;
  wallet: string;
  holds: string;
  amount: string;
  reference: string;
  posting: string;
  transactionId: string;
  expiresAt: string;
}) => `${guardedMoveCtes({
  from: p.wallet,
  to: p.holds,
  amount: p.amount,
  posting: p.posting,
  environment: p.environment,
  kind: "'hold'",
  reference: `${p.holdId}::text`,
  description: `'Hold for ' || ${p.reference}::text`,
})},
  hold as (
    insert into ledger_holds (id, environment, user_id, amount, reference, transaction_id, expires_at)
    select ${p.holdId}::uuid, ${p.environment}::environment, ${p.userId}::uuid, ${p.amount}::bigint, ${p.reference}::text,
      ${p.transactionId}::uuid, ${p.expiresAt}::timestamptz
    where exists (select 1 from moved)
  )`;

/** A hold placed on its own (ledger.hold, in a caller's transaction): how many accounts moved (0: too little money). */
export const PLACE_HOLD: Statement = statement(
  'ledger_place_hold_v1',
  `with go as (select 1),
  ${holdPlacementCtes({
    holdId: '$1',
    environment: '$2',
    userId: '$3',
    wallet: '$4',
    holds: '$5',
    amount: '$6',
    reference: '$7',
    posting: '$8',
    transactionId: '$9',
    expiresAt: '$10',
  })}
  select (select count(*) from moved)::int as moved`,
);

/**
 * The capture and release of a hold:
 * - Capture: the hold's whole amount leaves the user's holds account; `fee` goes to a fees shard
 *   and the rest to a provider-clearing shard.
 * - Release: the hold's whole amount goes back from the holds account to the user's wallet.
 *
 * Either happens at most once per hold, and only one of them: the guarded update of the hold's
 * status decides. The accounts the hold can move are locked in id order BEFORE the hold (as every
 * posting locks accounts), so a settle never holds the hold's row while waiting for an account a
 * posting holds.
 *
 * `p` names the SQL parameters (placeholders such as `$6`): the hold, capture or not, the fee,
 * when, the posting's id and the four accounts (the fees account may be null when the fee is 0).
 */
export interface HoldSettlementParams {
  holdId: string;
  capture: string;
  fee: string;
  at: string;
  postingId: string;
  holds: string;
  wallet: string;
  clearing: string;
  fees: string;
  /** Releases only a hold whose expiry is at or before this time (the expiry job's guard). */
  expiredBy?: string;
}

/** `locked`: the accounts the settle can move, in id order, when `when` holds (SQL). The fees shard only with a fee. */
export const holdAccountLocksCte = (p: HoldSettlementParams, when: string) => `locked as (
    select id from ledger_accounts
    where id = any(case when not ${p.capture}::boolean then array[${p.holds}::uuid, ${p.wallet}::uuid]
                        when ${p.fee}::bigint > 0 then array[${p.holds}::uuid, ${p.clearing}::uuid, ${p.fees}::uuid]
                        else array[${p.holds}::uuid, ${p.clearing}::uuid] end)
      and ${when}
    order by id
    for update
  )`;

/**
 * `held` (the hold moved from `held`, when `gate` holds), `lines` (the rule), `moved` (the
 * balances), `posting` and `entries`. Written after `locked`.
 */
export const holdSettlementCtes = (p: HoldSettlementParams, gate: string) => `held as (
    update ledger_holds set status = (case when ${p.capture}::boolean then 'captured' else 'released' end)::hold_status,
      settled_at = ${p.at}::timestamptz
    where id = ${p.holdId}::uuid and status = 'held' and ${gate}${
      p.expiredBy ? ` and expires_at <= ${p.expiredBy}::timestamptz` : ''
    }
    returning id, environment, amount, reference, transaction_id
  ),
  -- Materialised: inlined into the UPDATE below (a CTE read once is), its union of lateral VALUES
  -- lost rows when the UPDATE re-checked an account a concurrent transaction had just changed, so
  -- one side of a posting went unwritten (test/money/settle-lock-order.pg.test.ts caught it).
  lines as materialized (
    select v.account_id, v.amount from held,
      lateral (values (${p.holds}::uuid, -held.amount), (${p.clearing}::uuid, held.amount - ${p.fee}::bigint),
        (${p.fees}::uuid, ${p.fee}::bigint)) as v(account_id, amount)
    where ${p.capture}::boolean and v.amount <> 0
    union all
    select v.account_id, v.amount from held,
      lateral (values (${p.holds}::uuid, -held.amount), (${p.wallet}::uuid, held.amount)) as v(account_id, amount)
    where not ${p.capture}::boolean
  ),
  moved as (
    update ledger_accounts a set balance = a.balance + l.amount
    from lines l
    where a.id = l.account_id
    returning a.id, a.balance, l.amount
  ),
  posting as (
    insert into ledger_postings (id, environment, kind, reference, description)
    select ${p.postingId}::uuid, held.environment, case when ${p.capture}::boolean then 'capture' else 'release' end,
      held.id::text, (case when ${p.capture}::boolean then 'Capture of ' else 'Release of ' end) || held.reference
    from held
  ),
  entries as (
    insert into ledger_entries (posting_id, account_id, amount, balance_after)
    select ${p.postingId}::uuid, m.id, m.amount, m.balance from moved m
  )`;

const STANDALONE: HoldSettlementParams = {
  holdId: '$1',
  capture: '$2',
  fee: '$3',
  at: '$4',
  postingId: '$5',
  holds: '$6',
  wallet: '$7',
  clearing: '$8',
  fees: '$9',
};

/** The settle on its own (the ledger's capture and release): the hold it settled, or no row. */
export const SETTLE_HOLD: Statement = statement(
  'ledger_settle_hold_v1',
  `with ${holdAccountLocksCte(STANDALONE, 'true')},
  ${holdSettlementCtes(STANDALONE, '(select count(*) from locked) > 0')}
  select id, transaction_id from held`,
);

/** The same, releasing only a hold whose expiry is at or before $10. */
export const RELEASE_EXPIRED_HOLD: Statement = statement(
  'ledger_release_expired_hold_v1',
  `with ${holdAccountLocksCte(STANDALONE, 'true')},
  ${holdSettlementCtes({ ...STANDALONE, expiredBy: '$10' }, '(select count(*) from locked) > 0')}
  select id, transaction_id from held`,
);

/** The hold's owner, to find its accounts; a settled hold answers no row. */
export const HELD_HOLD_OWNER: Statement = statement(
  'ledger_held_hold_owner_v1',
  `select environment, user_id from ledger_holds where id = $1::uuid and status = 'held'`,
);

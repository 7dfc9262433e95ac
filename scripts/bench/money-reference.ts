/**
 * The fixed reference ceilings of `npm run bench:money`: a plain node:http server on a bare `pg`
 * pool, against tables of its own (schema `money_reference`, created here in the bench database),
 * importing nothing from src/. It is the yardstick a gateway refactor cannot move: change it only
 * to fix it, never to follow the gateway.
 *
 * `POST /p2p` `{"from": <id>, "to": <id>}`: a wallet-to-wallet transfer written once as the best
 * bare-pg SQL we know, ONE statement (one round trip, one commit, a named prepared statement):
 * both wallet rows locked in id order; the idempotency row inserted only if the sender holds the
 * amount and the key is new (so a replay or too little money writes nothing); the debit and the
 * credit; the posting and its two entries; a wallet-transaction row for each side; an event row
 * for each side. Its tables carry the indexes a wallet product needs to read them back and no
 * more: wallets by id; entries by (wallet, posting); transactions by id, by (wallet, reference)
 * unique and by (wallet, created_at); idempotency keys by (wallet, key); events by id and by
 * (wallet, id). No webhook deliveries or jobs: what a transfer must write, not what this gateway
 * chose to.
 *
 * `POST /commit`: the physical commit ceiling, one one-row insert per transaction (autocommit).
 *
 * `GET /stats`: round trips and writing commits since the last call (statement-counter.ts).
 * Wallets are the tenants' ids given as the first argument (a JSON list), each funded here.
 * Prints `{"ready":true,"pid":…,"port":…}`.
 */
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { countPgStatements } from './statement-counter.js';
import { servePeer } from './peer-server.js';

const FUNDS = '1000000000000';
const AMOUNT = 100n;

const SCHEMA = `
drop schema if exists money_reference cascade;
create schema money_reference;
create table money_reference.wallets (
  id uuid primary key,
  balance bigint not null check (balance >= 0)
);
create table money_reference.postings (
  id uuid primary key,
  reference text not null,
  created_at timestamptz not null
);
create table money_reference.entries (
  wallet_id uuid not null,
  posting_id uuid not null,
  amount bigint not null,
  balance_after bigint not null,
  primary key (wallet_id, posting_id)
);
create table money_reference.transactions (
  id uuid primary key,
  wallet_id uuid not null,
  type text not null,
  status text not null,
  amount bigint not null,
  reference text not null,
  counterparty jsonb not null,
  created_at timestamptz not null,
  unique (wallet_id, reference)
);
create index on money_reference.transactions (wallet_id, created_at);
create table money_reference.idempotency_keys (
  wallet_id uuid not null,
  key text not null,
  request_hash text not null,
  response jsonb not null,
  created_at timestamptz not null,
  primary key (wallet_id, key)
);
create table money_reference.events (
  id bigint generated always as identity primary key,
  wallet_id uuid not null,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null
);
create index on money_reference.events (wallet_id, id);
create table money_reference.commit_probe (
  id bigint generated always as identity primary key,
  at timestamptz not null
);`;

/**
 * $1 from, $2 to, $3 amount, $4 key, $5 request hash, $6 response, $7 now, $8 posting id,
 * $9 reference, $10 outgoing id, $11 incoming id, $12/$13 counterparties, $14/$15 event data.
 */
const TRANSFER = {
  name: 'reference_transfer',
  text: `with locked as (
    select id, balance from money_reference.wallets
    where id in ($1::uuid, $2::uuid)
    order by id
    for update
  ),
  claimed as (
    insert into money_reference.idempotency_keys (wallet_id, key, request_hash, response, created_at)
    select $1::uuid, $4::text, $5::text, $6::jsonb, $7::timestamptz
    where (select count(*) from locked) = 2
      and exists (select 1 from locked where id = $1::uuid and balance >= $3::bigint)
    on conflict do nothing
    returning 1
  ),
  moved as (
    update money_reference.wallets w
    set balance = w.balance + case when w.id = $1::uuid then -$3::bigint else $3::bigint end
    from locked l
    where w.id = l.id and exists (select 1 from claimed)
    returning w.id, w.balance
  ),
  posting as (
    insert into money_reference.postings (id, reference, created_at)
    select $8::uuid, $9::text, $7::timestamptz where exists (select 1 from moved)
  ),
  entries as (
    insert into money_reference.entries (wallet_id, posting_id, amount, balance_after)
    select m.id, $8::uuid, case when m.id = $1::uuid then -$3::bigint else $3::bigint end, m.balance
    from moved m
  ),
  transaction_rows as (
    insert into money_reference.transactions (id, wallet_id, type, status, amount, reference, counterparty, created_at)
    select t.id, t.wallet_id, t.type, 'COMPLETED', $3::bigint, t.reference, t.counterparty, $7::timestamptz
    from (values ($10::uuid, $1::uuid, 'TRANSFER_OUT', $9::text, $12::jsonb),
                 ($11::uuid, $2::uuid, 'TRANSFER_IN', $9::text || ':in', $13::jsonb))
      as t(id, wallet_id, type, reference, counterparty)
    where exists (select 1 from moved)
  ),
  event_rows as (
    insert into money_reference.events (wallet_id, type, data, created_at)
    select e.wallet_id, 'transaction.completed', e.data, $7::timestamptz
    from (values (1, $1::uuid, $14::jsonb), (2, $2::uuid, $15::jsonb)) as e(n, wallet_id, data)
    where exists (select 1 from moved)
    order by e.n
  )
  select (select count(*) from moved)::int as moved`,
};

const COMMIT = {
  name: 'reference_commit',
  text: 'insert into money_reference.commit_probe (at) values ($1::timestamptz)',
};

const [walletsJson] = process.argv.slice(2);
const wallets = JSON.parse(walletsJson!) as string[];
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL!, max: 20 });
await pool.query(SCHEMA);
await pool.query('insert into money_reference.wallets (id, balance) select unnest($1::uuid[]), $2::bigint', [
  wallets,
  FUNDS,
]);
await pool.query('analyze money_reference.wallets');
const counter = countPgStatements();

const eventData = (id: string, reference: string, type: string, at: string) =>
  JSON.stringify({
    id,
    reference,
    type,
    status: 'COMPLETED',
    amount: Number(AMOUNT) / 100,
    currency: 'NGN',
    version: 1,
    updatedAt: at,
  });

async function transfer(from: string, to: string): Promise<void> {
  const at = new Date().toISOString();
  const outId = randomUUID();
  const inId = randomUUID();
  const reference = `TRF-${outId}`;
  const key = randomUUID();
  const { rows } = await pool.query<{ moved: number }>({
    name: TRANSFER.name,
    text: TRANSFER.text,
    values: [
      from,
      to,
      AMOUNT.toString(),
      key,
      createHash('sha256').update(`${from}:${to}:${AMOUNT}:${key}`).digest('hex'),
      JSON.stringify({ result: { id: outId, reference, status: 'COMPLETED' } }),
      at,
      randomUUID(),
      reference,
      outId,
      inId,
      JSON.stringify({ userId: to }),
      JSON.stringify({ userId: from }),
      eventData(outId, reference, 'TRANSFER_OUT', at),
      eventData(inId, `${reference}:in`, 'TRANSFER_IN', at),
    ],
  });
  if (rows[0]?.moved !== 2) throw new Error('the reference transfer moved nothing');
}

await servePeer(pool, counter, (path, body) =>
  path === '/commit'
    ? pool.query({ name: COMMIT.name, text: COMMIT.text, values: [new Date().toISOString()] })
    : transfer(body.from!, body.to!),
);

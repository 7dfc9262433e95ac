/**
 * The 15-statement transfer of `npm run bench:money` (its rows "bare-pg 15 statements, …"; until
 * the exact-writes and reference ceilings it was "the bare-pg ceiling", though it compared another
 * design, not a ceiling): a plain node:http server (no framework, no domain code) whose every
 * request runs, in one transaction of separate statements on a `pg` pool, the same durable writes
 * as a gateway P2P transfer: both wallet rows locked in id order and updated, the posting and its
 * two entries, both wallet transactions, the idempotency row, both events, and each event's webhook
 * delivery and delivery job (each bench tenant has one endpoint, none with `--endpoints 0`),
 * holding both row locks across 15 round trips (11 without endpoints). `POST /p2p`
 * `{"from","to"}` moves between two tenants, `POST /hot` `{"to"}` from the treasury. `GET /stats`:
 * round trips and writing commits since the last call. Prints `{"ready":true,"pid":…,"port":…}`.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { countPgStatements } from './statement-counter.js';
import { servePeer } from './peer-server.js';

const url = process.env.DATABASE_URL!;
const [tenantsJson] = process.argv.slice(2);
const { tenants, treasury } = JSON.parse(tenantsJson!) as {
  tenants: Array<{ id: string }>;
  treasury: { id: string };
};
const pool = new pg.Pool({ connectionString: url, max: 20 });

const accountOf = new Map<string, string>();
const accounts = await pool.query<{ id: string; user_id: string }>(
  `select id, user_id from ledger_accounts where code = 'wallet' and environment = 'sandbox' and user_id = any($1::uuid[])`,
  [[...tenants.map((t) => t.id), treasury.id]],
);
for (const row of accounts.rows) accountOf.set(row.user_id, row.id);
const endpointOf = new Map<string, string>();
const endpoints = await pool.query<{ id: string; user_id: string }>(
  'select id, user_id from webhook_endpoints where user_id = any($1::uuid[]) and enabled',
  [[...tenants.map((t) => t.id), treasury.id]],
);
for (const row of endpoints.rows) endpointOf.set(row.user_id, row.id);

const counter = countPgStatements();

async function transfer(from: string, to: string): Promise<void> {
  const [a, b] = [accountOf.get(from)!, accountOf.get(to)!];
  const amount = '100';
  const now = new Date().toISOString();
  const outId = randomUUID();
  const inId = randomUUID();
  const postingId = randomUUID();
  const reference = `CEIL-${outId}`;
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select id from ledger_accounts where id = any($1::uuid[]) order by id for update', [[a, b]]);
    const debit = await client.query(
      'update ledger_accounts set balance = balance - $2 where id = $1 and (allow_negative or balance >= $2) returning balance',
      [a, amount],
    );
    if (debit.rowCount !== 1) throw new Error('insufficient');
    const credit = await client.query(
      'update ledger_accounts set balance = balance + $2 where id = $1 returning balance',
      [b, amount],
    );
    await client.query(
      `insert into ledger_postings (id, environment, kind, reference, description) values ($1, 'sandbox', 'ceiling', $2, $3)`,
      [postingId, outId, `Transfer ${reference}`],
    );
    await client.query(
      `insert into ledger_entries (posting_id, account_id, amount, balance_after) values ($1, $2, $3, $4), ($1, $5, $6, $7)`,
      [postingId, a, `-${amount}`, debit.rows[0].balance, b, amount, credit.rows[0].balance],
    );
    await client.query(
      `insert into wallet_transactions (id, user_id, environment, type, status, amount, reference, counterparty, created_at, updated_at)
       values ($1, $2, 'sandbox', 'TRANSFER_OUT', 'COMPLETED', $5, $6, $7, $8, $8),
              ($3, $4, 'sandbox', 'TRANSFER_IN', 'COMPLETED', $5, $6 || ':in', $9, $8, $8)`,
      [outId, from, inId, to, amount, reference, JSON.stringify({ userId: to }), now, JSON.stringify({ userId: from })],
    );
    await client.query(
      `insert into idempotency_keys (user_id, environment, operation, key, request_hash, status, response)
       values ($1, 'sandbox', 'ceiling.transfer', $2, 'h', 'done', $3)`,
      [from, randomUUID(), JSON.stringify({ result: { id: outId } })],
    );
    for (const [owner, id] of [
      [from, outId],
      [to, inId],
    ] as const) {
      const event = await client.query(
        `insert into events (type, user_id, environment, data, created_at) values ('transaction.completed', $1, 'sandbox', $2, $3) returning id`,
        [owner, JSON.stringify({ id, reference, status: 'COMPLETED', amount: 1 }), now],
      );
      const endpoint = endpointOf.get(owner);
      if (!endpoint) continue;
      const delivery = await client.query(
        'insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at) values ($1, $2, $3) returning id',
        [endpoint, event.rows[0].id, now],
      );
      await client.query(
        `insert into jobs (kind, lane, tenant, concurrency_key, payload, run_at) values ('webhook.deliver', 'webhooks', $1, $2, $3, $4)`,
        [owner, endpoint, JSON.stringify({ deliveryId: delivery.rows[0].id }), now],
      );
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

// The load generator picks the wallets, so that no two requests in flight share one (money-slots.ts).
await servePeer(pool, counter, (path, body) => transfer(path === '/hot' ? treasury.id : body.from!, body.to!));

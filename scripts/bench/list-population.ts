/**
 * The lists bench's rows, inserted by SQL in a few statements (the lists read them; nothing here
 * moves money): bill records and wallet transactions for each owner, `BENCH-<n>` / `TX-BENCH-<n>`
 * references for every owner alike (so a search term matches rows of every owner, as a partner's
 * reference prefix does in a real table), every owner's rows spread over the same span of time, and
 * amounts spread over their range apart from time and owner (the row's number times a prime).
 *
 * Rows go in in time order, all owners interleaved, as a table that grew over months holds them: a
 * large owner's rows are one in twenty of the heap's, not a block of their own, so a plan that visits
 * the table row by row pays for it here as it would in production. With more rows than an owner's
 * few, the list indexes are dropped first and built again after (faster than maintaining fifteen
 * indexes row by row); their definitions are read from the catalog, so what is measured is exactly
 * what the migrations made.
 */
import { sql } from 'drizzle-orm';
import { type Database, type Executor, queryRows } from '../../src/db/client.js';

export interface Owner {
  userId: string;
  rows: number;
}

const TABLES = ['bill_records', 'wallet_transactions'] as const;
/** Below this many rows in all, indexes are kept as they are (dropping them costs more than it saves). */
const REBUILD_ABOVE = 200_000;

/** Every owner's rows span this many minutes, whatever their number (the largest owner: one a minute). */
const spanMinutes = (owners: Owner[]) => Math.max(...owners.map((o) => o.rows));

export async function seedPopulation(db: Database, owners: Owner[]): Promise<void> {
  const total = owners.reduce((sum, o) => sum + o.rows, 0);
  const span = spanMinutes(owners);
  await db.transaction(async (tx) => {
    // One run's bulk load, in a database of its own: no timeout fits every machine's speed.
    await tx.execute(sql`set local statement_timeout = 0`);
    await tx.execute(sql`set local maintenance_work_mem = '256MB'`);
    await tx.execute(sql`create temporary table seed_owners (user_id uuid, n int, step float8) on commit drop`);
    for (let at = 0; at < owners.length; at += 500) {
      const batch = owners.slice(at, at + 500);
      await tx.execute(
        sql`insert into seed_owners select * from unnest(${`{${batch.map((o) => o.userId).join(',')}}`}::uuid[],
          ${`{${batch.map((o) => o.rows).join(',')}}`}::int[]) as o(user_id, n), lateral (select ${span}::float8 / o.n) s`,
      );
    }
    const rebuild = total > REBUILD_ABOVE ? await dropListIndexes(tx) : [];
    // g: the owner's row number (its reference); at: minutes before now, the same span for every owner.
    await tx.execute(sql`
      insert into bill_records (user_id, environment, reference, biller_code, item_code, customer, amount, fee, type, status, biller_name, provider, tx_ref, created_at, updated_at)
      select user_id, 'sandbox', 'BENCH-' || g, (array['BIL099','BIL100','BIL119','BIL200'])[1 + g % 4], 'AT099',
        '0803' || lpad((g % 10000)::text, 7, '0'), (100 + g * 7919 % 50000) * 100, 0,
        (array['AIRTIME','MOBILEDATA','CABLEBILLS','UTILITYBILLS'])[1 + g % 4]::bill_type,
        (array['SUCCESS','SUCCESS','SUCCESS','FAILED','PENDING'])[1 + g % 5]::bill_status,
        (array['MTN Airtime','Airtel Airtime','DStv','Ikeja Electric Prepaid'])[1 + g % 4], 'sandbox', 'SBX-FLYAPI-' || g,
        now() - make_interval(secs => g * step * 60), now() - make_interval(secs => greatest(0, g * step - g % 997) * 60)
      from seed_owners, generate_series(1, n) g
      order by g * step desc`);
    await tx.execute(sql`
      insert into wallet_transactions (user_id, environment, type, status, amount, fee, reference, description, created_at, updated_at)
      select user_id, 'sandbox',
        (array['DEPOSIT','WITHDRAWAL','TRANSFER_IN','TRANSFER_OUT','BILL'])[1 + g % 5]::wallet_transaction_type,
        (array['COMPLETED','COMPLETED','COMPLETED','FAILED','PENDING'])[1 + (g / 5) % 5]::wallet_transaction_status,
        (100 + g * 7919 % 50000) * 100, 0, 'TX-BENCH-' || g, 'bench',
        now() - make_interval(secs => g * step * 60), now() - make_interval(secs => g * step * 60)
      from seed_owners, generate_series(1, n) g
      order by g * step desc`);
    for (const definition of rebuild) await tx.execute(sql.raw(definition));
  });
  // As autovacuum leaves tables in steady state: statistics, and the visibility map index-only scans need.
  for (const table of TABLES) await db.execute(sql.raw(`vacuum analyze ${table}`));
}

/** Drops the lists' indexes that back no constraint; returns their definitions to build them again. */
async function dropListIndexes(tx: Executor): Promise<string[]> {
  const rows = await queryRows<{ name: string; definition: string }>(
    tx,
    sql`select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition
          from pg_index i
         where i.indrelid in ('bill_records'::regclass, 'wallet_transactions'::regclass)
           and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
  );
  for (const row of rows) await tx.execute(sql.raw(`drop index ${row.name}`));
  return rows.map((r) => r.definition);
}

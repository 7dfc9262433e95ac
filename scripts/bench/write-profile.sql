-- What one request of a money path writes, table by table: rows inserted and updated (HOT or not)
-- per request, the table's index count, and an upper bound on the index entries those writes add
-- (every insert and every non-HOT update adds one entry to each index; partial indexes the row
-- does not match add none, so the bound counts them too).
--
-- Run it on a database kept by a money bench that ran ONE path (each request has its own
-- Idempotency-Key, so the key count is the request count):
--
--   BENCH_KEEP_DB=1 npm run bench:money -- --warmup 1 --round 4 --rounds 1 --only 'airtime'
--   psql postgres://postgres@127.0.0.1:5432/<kept database> -f scripts/bench/write-profile.sql
--
-- The counters are PostgreSQL's cumulative statistics (pg_stat_user_tables), which include the
-- bench's setup (100 tenants, their keys, endpoints and funding): a few hundred rows, under 1 % of
-- a round's writes.
\pset footer off
with requests as (select count(*)::numeric as n from idempotency_keys),
per_table as (
  select s.relname as table_name,
    s.n_tup_ins / r.n as inserted,
    s.n_tup_upd / r.n as updated,
    (s.n_tup_upd - s.n_tup_hot_upd) / r.n as updated_not_hot,
    (select count(*) from pg_index i where i.indrelid = s.relid) as indexes
  from pg_stat_user_tables s, requests r
  where s.n_tup_ins + s.n_tup_upd > 2 * r.n / 100
)
select * from (
  select table_name, round(inserted, 2) as inserted, round(updated, 2) as updated,
    round(updated_not_hot, 2) as "updated, not HOT", indexes,
    round((inserted + updated_not_hot) * indexes, 1) as "index entries ≤"
  from per_table
  union all
  select 'total', round(sum(inserted), 2), round(sum(updated), 2), round(sum(updated_not_hot), 2), null,
    round(sum((inserted + updated_not_hot) * indexes), 1)
  from per_table
) profile
order by table_name = 'total', "index entries ≤" desc;

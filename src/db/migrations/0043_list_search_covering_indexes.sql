-- Lists stay fast in a large table (2M rows over 1,000 owners, one with 100,000): a search, an amount
-- range or a type read in the default order used to visit the table row by row, and an owner's rows
-- are scattered over the whole heap (one row in twenty for a large owner), so a broad search read
-- thousands of heap pages for its exact total. The owner's (created_at, id) index now carries what
-- those filters test, so the total and the page's ids come from the index alone:
--   * lower(reference) and lower(tx_ref) as trailing key columns (after the unique (created_at, id)
--     they change no order): a search is `lower(col) LIKE lower(pattern)`, exactly ILIKE's match,
--     tested on the stored lower-case text; ILIKE lower-cases every row's text again, about eight
--     times the cost per row;
--   * the raw columns and amount and type in INCLUDE: PostgreSQL answers from an index only when
--     every column the query names is a plain column of it, expression columns are not enough.
-- The trigram GIN indexes on references go: a partner's references share a prefix, so the term's
-- trigrams are in nearly every row and the owner's posting lists cost more than reading the owner's
-- index entries (42 ms against 14 ms for "BENCH-4242" among 2M rows). Biller names keep theirs, for
-- the owners with more distinct names than are worth stepping through (bill-store.ts).
-- The new indexes are built before the old ones are dropped; on a large table build them
-- beforehand with CREATE INDEX CONCURRENTLY under the same names, and IF NOT EXISTS skips the build.
CREATE INDEX IF NOT EXISTS "bill_records_owner_created_search_idx" ON "bill_records"
  USING btree ("user_id", "environment", "created_at", "id", lower("reference"), lower("tx_ref"))
  INCLUDE ("reference", "tx_ref", "amount", "type");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "wallet_transactions_owner_created_search_idx" ON "wallet_transactions"
  USING btree ("user_id", "environment", "created_at", "id", lower("reference"))
  INCLUDE ("reference", "amount", "type");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "bill_records_owner_biller_name_trgm_idx" ON "bill_records"
  USING gin ("user_id", "biller_name" gin_trgm_ops);
--> statement-breakpoint
DROP INDEX IF EXISTS "bill_records_owner_search_trgm_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "wallet_transactions_owner_reference_trgm_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "wallet_transactions_owner_created_id_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "bill_records_owner_created_id_idx";

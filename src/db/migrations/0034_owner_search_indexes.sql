-- The partial-match searches are always within one owner's records, but their trigram indexes
-- held every owner's: a term whose trigrams are common in the table (a partner's reference prefix,
-- "BENCH-4242" among 2M rows of 1,000 users) walked posting lists of millions of rows to find the
-- owner's eleven, 0.2-0.3 s where the owner's own rows would have answered in milliseconds. Each
-- index now starts with the owner (btree_gin lets a GIN index hold the uuid beside the trigrams), so
-- a search intersects the trigrams' rows with the owner's and reads no one else's.
-- btree_gin is a trusted extension, so the database owner may create it, as pg_trgm (0006).
-- As in 0023: the new indexes are built before the old ones are dropped; on a large table build them
-- beforehand with CREATE INDEX CONCURRENTLY under the same names, and IF NOT EXISTS skips the build.
CREATE EXTENSION IF NOT EXISTS btree_gin;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "bill_records_owner_search_trgm_idx" ON "bill_records"
  USING gin ("user_id", "reference" gin_trgm_ops, "tx_ref" gin_trgm_ops, "biller_name" gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "wallet_transactions_owner_reference_trgm_idx" ON "wallet_transactions"
  USING gin ("user_id", "reference" gin_trgm_ops);
--> statement-breakpoint
DROP INDEX IF EXISTS "bill_records_search_trgm_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "wallet_transactions_reference_trgm_idx";

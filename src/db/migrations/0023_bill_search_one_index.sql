-- One trigram index over the three searched columns of bill records instead of one per column: a
-- GIN index can answer a condition on any of its columns, so `reference ILIKE … OR tx_ref ILIKE …`
-- is still a BitmapOr of two scans of it, and a biller-name pattern a scan of it; every write of a
-- bill record adds its trigrams to one pending list instead of three.
-- The new index is built before the old ones are dropped: CREATE INDEX takes a SHARE lock (reads
-- go on during the build), a DROP an ACCESS EXCLUSIVE one held until the migrations' transaction
-- commits, so the drops come last and nothing slow runs while it is held. On a large table build it beforehand
-- with CREATE INDEX CONCURRENTLY under the same name; IF NOT EXISTS then skips the build.
CREATE INDEX IF NOT EXISTS "bill_records_search_trgm_idx" ON "bill_records"
  USING gin ("reference" gin_trgm_ops, "tx_ref" gin_trgm_ops, "biller_name" gin_trgm_ops);
--> statement-breakpoint
DROP INDEX IF EXISTS "bill_records_reference_trgm_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "bill_records_tx_ref_trgm_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "bill_records_biller_name_trgm_idx";

-- Partial-match searches of bill records (search in reference/txRef, biller name) use trigram
-- indexes; pg_trgm is a trusted extension, so the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "bill_records_reference_trgm_idx" ON "bill_records" USING gin ("reference" gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "bill_records_tx_ref_trgm_idx" ON "bill_records" USING gin ("tx_ref" gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "bill_records_biller_name_trgm_idx" ON "bill_records" USING gin ("biller_name" gin_trgm_ops);

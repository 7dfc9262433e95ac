-- Paginated lists keep exact totals at any size: one index per filter and sort, each ending in the
-- list's order (sort column, id), so a page is a range of one index and a total an index-only count.
-- The indexes they replace lacked the id tie-breaker (every page sorted again).
CREATE INDEX "wallet_transactions_owner_created_id_idx" ON "wallet_transactions" USING btree ("user_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "wallet_transactions_owner_type_status_created_idx" ON "wallet_transactions" USING btree ("user_id","environment","type","status","created_at","id");--> statement-breakpoint
CREATE INDEX "wallet_transactions_owner_status_created_idx" ON "wallet_transactions" USING btree ("user_id","environment","status","created_at","id");--> statement-breakpoint
CREATE INDEX "wallet_transactions_owner_amount_created_idx" ON "wallet_transactions" USING btree ("user_id","environment","amount","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_created_id_idx" ON "bill_records" USING btree ("user_id","environment","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_updated_id_idx" ON "bill_records" USING btree ("user_id","environment","updated_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_amount_id_idx" ON "bill_records" USING btree ("user_id","environment","amount","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_type_status_created_idx" ON "bill_records" USING btree ("user_id","environment","type","status","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_status_created_id_idx" ON "bill_records" USING btree ("user_id","environment","status","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_biller_name_created_idx" ON "bill_records" USING btree ("user_id","environment","biller_name","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_biller_code_created_idx" ON "bill_records" USING btree ("user_id","environment","biller_code","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_records_owner_customer_created_idx" ON "bill_records" USING btree ("user_id","environment","customer","created_at","id");--> statement-breakpoint
DROP INDEX "wallet_transactions_owner_created_idx";--> statement-breakpoint
DROP INDEX "bill_records_owner_created_idx";--> statement-breakpoint
DROP INDEX "bill_records_owner_updated_idx";--> statement-breakpoint
DROP INDEX "bill_records_owner_amount_idx";--> statement-breakpoint
DROP INDEX "bill_records_owner_type_created_idx";--> statement-breakpoint
DROP INDEX "bill_records_owner_status_created_idx";--> statement-breakpoint
-- Part-of-reference search on wallet transactions, as bill records have had since 0006.
CREATE INDEX IF NOT EXISTS "wallet_transactions_reference_trgm_idx" ON "wallet_transactions" USING gin ("reference" gin_trgm_ops);

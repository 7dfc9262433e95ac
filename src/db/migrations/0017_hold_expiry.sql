ALTER TABLE "ledger_holds" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "ledger_holds" ADD COLUMN "transaction_id" uuid;
-- One chain-send table for every chain family (src/db/chain-schema.ts): solana_transfers' rows move to
-- chain_sends with family 'solana', and the table gains what a family with nonces needs (the nonce, the
-- block and confirmations, and the link of a replacement to the send it replaces). Names are the core's:
-- a mint is an asset, a signature a transaction hash, lamports of fee a native fee, 'sol' the native kind.
-- Ids are kept, so jobs (a send's confirmation job has its id), events and operation_transitions still
-- point at their send. The old table is locked first: no send is written to it while its rows move.
LOCK TABLE "solana_transfers" IN ACCESS EXCLUSIVE MODE;--> statement-breakpoint
CREATE TYPE "public"."chain_send_kind" AS ENUM('native', 'token', 'swap');--> statement-breakpoint
CREATE TYPE "public"."chain_send_status" AS ENUM('pending', 'confirmed', 'failed', 'replaced');--> statement-breakpoint
CREATE TABLE "chain_sends" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"family" text NOT NULL,
	"network" text NOT NULL,
	"kind" "chain_send_kind" NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"asset" text,
	"amount_raw" numeric(39,0) NOT NULL,
	"decimals" integer NOT NULL,
	"fee_raw" numeric(39,0) DEFAULT 0 NOT NULL,
	"output_asset" text,
	"output_amount_raw" numeric(39,0),
	"tx_hash" text NOT NULL,
	"wire" text NOT NULL,
	"valid_through_height" bigint,
	"nonce" bigint,
	"block" bigint,
	"confirmations" integer DEFAULT 0 NOT NULL,
	"replaces" uuid,
	"status" "chain_send_status" DEFAULT 'pending' NOT NULL,
	"error" text,
	"quote_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
INSERT INTO "chain_sends" ("id", "user_id", "environment", "family", "network", "kind", "from_address", "to_address",
	"asset", "amount_raw", "decimals", "fee_raw", "output_asset", "output_amount_raw", "tx_hash", "wire",
	"valid_through_height", "status", "error", "quote_id", "created_at", "updated_at")
SELECT "id", "user_id", "environment", 'solana', "network",
	(CASE "kind" WHEN 'sol' THEN 'native' ELSE "kind"::text END)::"chain_send_kind", "from_address", "to_address",
	"mint", "amount_raw", "decimals", "fee_lamports", "output_mint", "output_amount_raw", "signature", "wire",
	"last_valid_block_height", "status"::text::"chain_send_status", "error", "quote_id", "created_at", "updated_at"
FROM "solana_transfers";--> statement-breakpoint
DROP TABLE "solana_transfers";--> statement-breakpoint
DROP TYPE "public"."solana_transfer_kind";--> statement-breakpoint
DROP TYPE "public"."solana_transfer_status";--> statement-breakpoint
ALTER TABLE "chain_sends" ADD CONSTRAINT "chain_sends_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chain_sends" ADD CONSTRAINT "chain_sends_replaces_chain_sends_id_fk" FOREIGN KEY ("replaces") REFERENCES "public"."chain_sends"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chain_sends_tx_hash_key" ON "chain_sends" USING btree ("family","tx_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "chain_sends_quote_key" ON "chain_sends" USING btree ("quote_id") WHERE "chain_sends"."quote_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "chain_sends_replaces_key" ON "chain_sends" USING btree ("replaces") WHERE "chain_sends"."replaces" is not null;--> statement-breakpoint
CREATE INDEX "chain_sends_owner_idx" ON "chain_sends" USING btree ("user_id","environment","family","created_at");--> statement-breakpoint
CREATE INDEX "chain_sends_pending_idx" ON "chain_sends" USING btree ("family","network","from_address") WHERE "chain_sends"."status" = 'pending';

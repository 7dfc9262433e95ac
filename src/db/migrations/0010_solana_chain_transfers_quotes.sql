CREATE TYPE "public"."solana_transfer_kind" AS ENUM('sol', 'token', 'swap');--> statement-breakpoint
CREATE TYPE "public"."solana_transfer_status" AS ENUM('pending', 'confirmed', 'failed');--> statement-breakpoint
CREATE TABLE "solana_quotes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"network" text NOT NULL,
	"quote" jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "solana_sandbox_chains" (
	"network" text PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"snapshot" "bytea" NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "solana_transfers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"network" text NOT NULL,
	"kind" "solana_transfer_kind" NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"mint" text,
	"amount_raw" numeric(39,0) NOT NULL,
	"decimals" integer NOT NULL,
	"fee_lamports" bigint DEFAULT 0 NOT NULL,
	"output_mint" text,
	"output_amount_raw" numeric(39,0),
	"signature" text NOT NULL,
	"wire" text NOT NULL,
	"last_valid_block_height" bigint NOT NULL,
	"status" "solana_transfer_status" DEFAULT 'pending' NOT NULL,
	"error" text,
	"quote_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "solana_watch_cursors" (
	"address" text NOT NULL,
	"network" text NOT NULL,
	"wallet_address" text NOT NULL,
	"last_signature" text,
	"checked_at" timestamp with time zone,
	"locked_until" timestamp with time zone,
	CONSTRAINT "solana_watch_cursors_address_network_pk" PRIMARY KEY("address","network")
);
--> statement-breakpoint
ALTER TABLE "solana_quotes" ADD CONSTRAINT "solana_quotes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "solana_transfers" ADD CONSTRAINT "solana_transfers_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "solana_quotes_owner_idx" ON "solana_quotes" USING btree ("user_id","environment","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "solana_transfers_signature_key" ON "solana_transfers" USING btree ("signature");--> statement-breakpoint
CREATE INDEX "solana_transfers_owner_idx" ON "solana_transfers" USING btree ("user_id","environment","created_at");
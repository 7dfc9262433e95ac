CREATE TABLE "solana_wallets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"address" text NOT NULL,
	"encrypted_secret" text NOT NULL,
	"wrapped_data_key" text NOT NULL,
	"key_version" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "solana_wallets" ADD CONSTRAINT "solana_wallets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "solana_wallets_owner_key" ON "solana_wallets" USING btree ("user_id","environment");--> statement-breakpoint
CREATE UNIQUE INDEX "solana_wallets_address_env_key" ON "solana_wallets" USING btree ("environment","address");
CREATE TABLE "evm_incoming_cursors" (
	"environment" "environment" NOT NULL,
	"network" text NOT NULL,
	"block" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evm_incoming_cursors_environment_network_pk" PRIMARY KEY("environment","network")
);
--> statement-breakpoint
CREATE TABLE "evm_nonces" (
	"environment" "environment" NOT NULL,
	"network" text NOT NULL,
	"address" text NOT NULL,
	"next" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evm_nonces_environment_network_address_pk" PRIMARY KEY("environment","network","address")
);
--> statement-breakpoint
CREATE TABLE "evm_wallets" (
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
ALTER TABLE "evm_wallets" ADD CONSTRAINT "evm_wallets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "evm_wallets_owner_key" ON "evm_wallets" USING btree ("user_id","environment");--> statement-breakpoint
CREATE UNIQUE INDEX "evm_wallets_address_env_key" ON "evm_wallets" USING btree ("environment","address");
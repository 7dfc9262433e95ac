CREATE TABLE "solana_sandbox_accounts" (
	"network" text NOT NULL,
	"address" text NOT NULL,
	"lamports" numeric(39,0) NOT NULL,
	"owner" text NOT NULL,
	"data" "bytea" NOT NULL,
	"executable" boolean NOT NULL,
	"version" bigint NOT NULL,
	CONSTRAINT "solana_sandbox_accounts_network_address_pk" PRIMARY KEY("network","address")
);
--> statement-breakpoint
CREATE TABLE "solana_sandbox_signatures" (
	"network" text NOT NULL,
	"signature" text NOT NULL,
	"version" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "solana_sandbox_signatures_network_signature_pk" PRIMARY KEY("network","signature")
);
--> statement-breakpoint
ALTER TABLE "solana_sandbox_chains" ALTER COLUMN "snapshot" DROP NOT NULL;--> statement-breakpoint
CREATE INDEX "solana_sandbox_accounts_version_idx" ON "solana_sandbox_accounts" USING btree ("network","version");--> statement-breakpoint
CREATE INDEX "solana_sandbox_signatures_version_idx" ON "solana_sandbox_signatures" USING btree ("network","version");
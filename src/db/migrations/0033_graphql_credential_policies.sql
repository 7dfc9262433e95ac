-- GraphQL access per credential (docs/graphql.md, "Trusted documents and per-credential limits"): an API key's
-- or a Connect app's switch to run only its trusted documents, its own cost and depth limits (columns of
-- the rows authentication already reads, so a request costs no extra query), an app's browser origins,
-- and the trusted documents themselves, each owned by exactly one key or app.
CREATE TABLE "trusted_documents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"api_key_id" uuid,
	"app_id" uuid,
	"hash" text NOT NULL,
	"canonical_hash" text NOT NULL,
	"body" text NOT NULL,
	"operation_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "trusted_documents_one_credential" CHECK (num_nonnulls("trusted_documents"."api_key_id", "trusted_documents"."app_id") = 1)
);
--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "allowed_origins" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "trusted_documents_only" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "graphql_max_cost" integer;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "graphql_max_depth" integer;--> statement-breakpoint
ALTER TABLE "api_key_controls" ADD COLUMN "trusted_documents_only" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "api_key_controls" ADD COLUMN "graphql_max_cost" integer;--> statement-breakpoint
ALTER TABLE "api_key_controls" ADD COLUMN "graphql_max_depth" integer;--> statement-breakpoint
ALTER TABLE "trusted_documents" ADD CONSTRAINT "trusted_documents_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trusted_documents" ADD CONSTRAINT "trusted_documents_app_id_oauth_clients_id_fk" FOREIGN KEY ("app_id") REFERENCES "public"."oauth_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "trusted_documents_key_hash_key" ON "trusted_documents" USING btree ("api_key_id","hash");--> statement-breakpoint
CREATE UNIQUE INDEX "trusted_documents_app_hash_key" ON "trusted_documents" USING btree ("app_id","hash");
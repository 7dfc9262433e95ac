-- Facade mode's inbound webhooks: each partner's upstream secret, and on events the upstream's own id
-- (null for the gateway's own events), unique per owner so a repeated delivery is stored once. The
-- new column has no default, so adding it rewrites nothing; the partial index holds no row of the
-- gateway's own, but building it reads the events table under a lock that holds writes: IF NOT
-- EXISTS lets an operator with a large events table build it beforehand with CREATE UNIQUE INDEX
-- CONCURRENTLY under this name (see docs/production.md).
CREATE TABLE "facade_inbound_secrets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"secret_sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "source_id" text;--> statement-breakpoint
ALTER TABLE "facade_inbound_secrets" ADD CONSTRAINT "facade_inbound_secrets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "facade_inbound_secrets_owner_key" ON "facade_inbound_secrets" USING btree ("user_id","environment");--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "events_source_key" ON "events" USING btree ("user_id","environment","source_id") WHERE "events"."source_id" is not null;
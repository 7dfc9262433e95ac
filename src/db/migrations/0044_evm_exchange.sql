ALTER TYPE "public"."chain_send_kind" ADD VALUE 'approve';--> statement-breakpoint
CREATE TABLE "chain_quotes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"family" text NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"network" text NOT NULL,
	"quote" jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"executed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_quotes" ADD CONSTRAINT "chain_quotes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chain_quotes_owner_idx" ON "chain_quotes" USING btree ("user_id","environment","created_at");
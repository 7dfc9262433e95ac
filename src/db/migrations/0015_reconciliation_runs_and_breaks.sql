CREATE TABLE "recon_breaks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"environment" "environment" NOT NULL,
	"provider" text NOT NULL,
	"business_date" text NOT NULL,
	"item_type" text NOT NULL,
	"reference" text NOT NULL,
	"kind" text NOT NULL,
	"currency" text NOT NULL,
	"our_amount" text,
	"their_amount" text,
	"our_status" text,
	"their_status" text,
	"detail" jsonb,
	"status" text DEFAULT 'open' NOT NULL,
	"first_run_id" uuid NOT NULL,
	"last_run_id" uuid NOT NULL,
	"detected_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolution_note" text
);
--> statement-breakpoint
CREATE TABLE "recon_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"environment" "environment" NOT NULL,
	"business_date" text NOT NULL,
	"trigger" text NOT NULL,
	"outcome" text NOT NULL,
	"matched" integer NOT NULL,
	"breaks" integer NOT NULL,
	"sources" jsonb NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "recon_breaks" ADD CONSTRAINT "recon_breaks_first_run_id_recon_runs_id_fk" FOREIGN KEY ("first_run_id") REFERENCES "public"."recon_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recon_breaks" ADD CONSTRAINT "recon_breaks_last_run_id_recon_runs_id_fk" FOREIGN KEY ("last_run_id") REFERENCES "public"."recon_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "recon_breaks_open_key" ON "recon_breaks" USING btree ("environment","provider","item_type","reference","kind") WHERE "recon_breaks"."status" = 'open';--> statement-breakpoint
CREATE INDEX "recon_breaks_status_idx" ON "recon_breaks" USING btree ("status","detected_at");--> statement-breakpoint
CREATE INDEX "recon_runs_finished_idx" ON "recon_runs" USING btree ("finished_at");
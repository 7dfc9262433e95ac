-- Sandbox test clocks (docs/sandbox.md, "Test clocks"): one clock per sandbox account at most, its time the
-- wall clock plus an offset that advances only; a job records the clock its due time was read from, so an
-- advance finds the account's jobs through a partial index that holds no other job.
CREATE TABLE "test_clocks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" DEFAULT 'sandbox' NOT NULL,
	"name" text NOT NULL,
	"offset_ms" bigint DEFAULT 0 NOT NULL,
	"attached_at" timestamp with time zone,
	"advancing_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "test_clocks_sandbox_only" CHECK ("test_clocks"."environment" = 'sandbox')
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "test_clock_id" uuid;--> statement-breakpoint
ALTER TABLE "test_clocks" ADD CONSTRAINT "test_clocks_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "test_clocks_attached_account_idx" ON "test_clocks" USING btree ("user_id","environment") WHERE "test_clocks"."attached_at" is not null;--> statement-breakpoint
CREATE INDEX "jobs_test_clock_idx" ON "jobs" USING btree ("test_clock_id","run_at") WHERE "jobs"."status" = 'pending' and "jobs"."test_clock_id" is not null;
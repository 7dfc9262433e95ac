CREATE TYPE "public"."bill_schedule_status" AS ENUM('active', 'cancelled', 'completed');--> statement-breakpoint
CREATE TYPE "public"."bill_status" AS ENUM('PENDING', 'SUCCESS', 'FAILED');--> statement-breakpoint
CREATE TYPE "public"."bill_type" AS ENUM('AIRTIME', 'MOBILEDATA', 'CABLEBILLS', 'UTILITYBILLS');--> statement-breakpoint
ALTER TYPE "public"."wallet_transaction_type" ADD VALUE 'BILL';--> statement-breakpoint
CREATE TABLE "bill_beneficiaries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"name" text NOT NULL,
	"type" "bill_type" NOT NULL,
	"biller_code" text NOT NULL,
	"biller_name" text NOT NULL,
	"customer" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bill_records" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"reference" text NOT NULL,
	"biller_code" text NOT NULL,
	"item_code" text NOT NULL,
	"customer" text NOT NULL,
	"amount" bigint NOT NULL,
	"fee" bigint DEFAULT 0 NOT NULL,
	"type" "bill_type" NOT NULL,
	"status" "bill_status" DEFAULT 'PENDING' NOT NULL,
	"provider_data" jsonb,
	"tx_ref" text,
	"biller_name" text NOT NULL,
	"customer_name" text,
	"validity_period" text,
	"metadata" text,
	"token" text,
	"units" text,
	"hold_id" uuid,
	"provider" text NOT NULL,
	"schedule_id" uuid,
	"failure_reason" text,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_date" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "bill_schedules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"payment" jsonb NOT NULL,
	"first_run_at" timestamp with time zone NOT NULL,
	"recurrence" text,
	"next_run_at" timestamp with time zone,
	"run_count" integer DEFAULT 0 NOT NULL,
	"status" "bill_schedule_status" DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "bill_beneficiaries" ADD CONSTRAINT "bill_beneficiaries_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_records" ADD CONSTRAINT "bill_records_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_records" ADD CONSTRAINT "bill_records_hold_id_ledger_holds_id_fk" FOREIGN KEY ("hold_id") REFERENCES "public"."ledger_holds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_schedules" ADD CONSTRAINT "bill_schedules_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "bill_beneficiaries_owner_target_key" ON "bill_beneficiaries" USING btree ("user_id","environment","biller_code","customer");--> statement-breakpoint
CREATE UNIQUE INDEX "bill_records_owner_reference_key" ON "bill_records" USING btree ("user_id","environment","reference");--> statement-breakpoint
CREATE INDEX "bill_records_owner_created_idx" ON "bill_records" USING btree ("user_id","environment","created_at");--> statement-breakpoint
CREATE INDEX "bill_records_owner_updated_idx" ON "bill_records" USING btree ("user_id","environment","updated_at");--> statement-breakpoint
CREATE INDEX "bill_records_owner_amount_idx" ON "bill_records" USING btree ("user_id","environment","amount");--> statement-breakpoint
CREATE INDEX "bill_records_owner_type_created_idx" ON "bill_records" USING btree ("user_id","environment","type","created_at");--> statement-breakpoint
CREATE INDEX "bill_records_owner_status_created_idx" ON "bill_records" USING btree ("user_id","environment","status","created_at");--> statement-breakpoint
CREATE INDEX "bill_records_pending_idx" ON "bill_records" USING btree ("status","updated_at") WHERE "bill_records"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "bill_schedules_owner_idx" ON "bill_schedules" USING btree ("user_id","environment","created_at");
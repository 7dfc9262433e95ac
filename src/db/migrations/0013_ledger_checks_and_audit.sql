CREATE TABLE "audit_records" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigserial NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment",
	"actor_kind" text NOT NULL,
	"actor_id" text,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"changes" jsonb NOT NULL,
	"ip" text,
	"user_agent" text,
	"created_at" timestamp with time zone NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_check_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL,
	"ok" boolean NOT NULL,
	"accounts_checked" integer NOT NULL,
	"postings_checked" integer NOT NULL,
	"mismatched_accounts" jsonb NOT NULL,
	"mismatched_account_count" integer NOT NULL,
	"unbalanced_postings" jsonb NOT NULL,
	"unbalanced_posting_count" integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "audit_records_seq_key" ON "audit_records" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "audit_records_owner_idx" ON "audit_records" USING btree ("user_id","created_at");--> statement-breakpoint
-- Row triggers do not fire on TRUNCATE: refuse it too, for every role (the app role also lacks the grant).
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_postings_no_truncate BEFORE TRUNCATE ON ledger_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_entries, ledger_postings FROM PUBLIC;
--> statement-breakpoint
-- Audit records are appended, never changed: the same refusal as the ledger's.
CREATE TRIGGER audit_records_append_only BEFORE UPDATE OR DELETE ON audit_records
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_records_no_truncate BEFORE TRUNCATE ON audit_records
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
REVOKE UPDATE, DELETE, TRUNCATE ON audit_records FROM PUBLIC;

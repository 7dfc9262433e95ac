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
-- Row triggers do not fire on TRUNCATE: refuse it too, for every role (the app role also lacks the grant).
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_postings_no_truncate BEFORE TRUNCATE ON ledger_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_entries, ledger_postings FROM PUBLIC;

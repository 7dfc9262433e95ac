CREATE TYPE "public"."asset_hold_status" AS ENUM('held', 'captured', 'released');--> statement-breakpoint
CREATE TABLE "asset_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"environment" "environment" NOT NULL,
	"user_id" uuid,
	"code" text NOT NULL,
	"family" text NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"address" text,
	"key" text NOT NULL,
	"balance" numeric(39,0) DEFAULT 0 NOT NULL,
	"allow_negative" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "asset_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"posting_id" uuid NOT NULL,
	"account_id" uuid NOT NULL,
	"amount" numeric(39,0) NOT NULL,
	"balance_after" numeric(39,0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "asset_holds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"environment" "environment" NOT NULL,
	"user_id" uuid NOT NULL,
	"send_id" uuid NOT NULL,
	"tx_hash" text NOT NULL,
	"asset" text NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"holds_account_id" uuid NOT NULL,
	"amount" numeric(39,0) NOT NULL,
	"principal" numeric(39,0) NOT NULL,
	"status" "asset_hold_status" DEFAULT 'held' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "asset_postings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"environment" "environment" NOT NULL,
	"kind" text NOT NULL,
	"reference" text NOT NULL,
	"asset" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "asset_accounts" ADD CONSTRAINT "asset_accounts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "asset_entries" ADD CONSTRAINT "asset_entries_posting_id_asset_postings_id_fk" FOREIGN KEY ("posting_id") REFERENCES "public"."asset_postings"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "asset_entries" ADD CONSTRAINT "asset_entries_account_id_asset_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."asset_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "asset_holds" ADD CONSTRAINT "asset_holds_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "asset_holds" ADD CONSTRAINT "asset_holds_wallet_account_id_asset_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."asset_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "asset_holds" ADD CONSTRAINT "asset_holds_holds_account_id_asset_accounts_id_fk" FOREIGN KEY ("holds_account_id") REFERENCES "public"."asset_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "asset_accounts_key" ON "asset_accounts" USING btree ("key");--> statement-breakpoint
CREATE INDEX "asset_accounts_wallet_idx" ON "asset_accounts" USING btree ("environment","family","network","address");--> statement-breakpoint
CREATE INDEX "asset_entries_account_idx" ON "asset_entries" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "asset_entries_posting_idx" ON "asset_entries" USING btree ("posting_id");--> statement-breakpoint
CREATE UNIQUE INDEX "asset_holds_send_asset" ON "asset_holds" USING btree ("send_id","asset");--> statement-breakpoint
CREATE INDEX "asset_holds_tx_hash_idx" ON "asset_holds" USING btree ("tx_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "asset_postings_kind_reference" ON "asset_postings" USING btree ("kind","reference");--> statement-breakpoint
-- Posted asset-ledger rows never change, as the NGN ledger's: corrections are new postings.
CREATE TRIGGER asset_entries_append_only BEFORE UPDATE OR DELETE ON asset_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
CREATE TRIGGER asset_postings_append_only BEFORE UPDATE OR DELETE ON asset_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
-- A user's balance never goes below zero, whatever statement moves it (the guarded updates are the first line).
ALTER TABLE "asset_accounts" ADD CONSTRAINT "asset_accounts_not_overdrawn" CHECK ("allow_negative" OR "balance" >= 0);
--> statement-breakpoint
-- Every asset posting balances, whoever writes it (the NGN ledger's rule, 0031): two or more entries
-- summing to zero (one asset per posting), checked at commit.
CREATE FUNCTION asset_check_posting_balanced() RETURNS trigger AS $$
DECLARE
  posting uuid;
  entries bigint;
  total numeric;
BEGIN
  IF TG_TABLE_NAME = 'asset_postings' THEN
    posting := NEW.id;
  ELSE
    posting := NEW.posting_id;
  END IF;
  SELECT count(*), coalesce(sum(amount), 0) INTO entries, total FROM asset_entries WHERE posting_id = posting;
  IF entries < 2 OR total <> 0 THEN
    RAISE EXCEPTION 'asset posting % is unbalanced: % entries summing to % base units', posting, entries, total
      USING ERRCODE = 'check_violation', CONSTRAINT = 'asset_postings_balanced', TABLE = TG_TABLE_NAME,
        DETAIL = 'A posting needs two or more entries that sum to zero; the transaction was rolled back.';
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER asset_postings_balanced AFTER INSERT ON asset_postings
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION asset_check_posting_balanced();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER asset_entries_balanced AFTER INSERT ON asset_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION asset_check_posting_balanced();

-- Exact list totals without counting: one row per (owner, list, type, status), kept by triggers in
-- the same transaction as the change they count. Writers of bill records and wallet transactions
-- wait while the counts are first taken, so no row is counted twice or missed.
CREATE TABLE "list_counts" (
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"list" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "list_counts_user_id_environment_list_type_status_pk" PRIMARY KEY("user_id","environment","list","type","status")
);
--> statement-breakpoint
LOCK TABLE "bill_records", "wallet_transactions" IN SHARE MODE;
--> statement-breakpoint
INSERT INTO "list_counts" ("user_id", "environment", "list", "type", "status", "n")
SELECT "user_id", "environment", 'bill_records', "type"::text, "status"::text, count(*) FROM "bill_records" GROUP BY 1, 2, 3, 4, 5
UNION ALL
SELECT "user_id", "environment", 'wallet_transactions', "type"::text, "status"::text, count(*) FROM "wallet_transactions" GROUP BY 1, 2, 3, 4, 5;
--> statement-breakpoint
-- Statement triggers of both tables (TG_TABLE_NAME names the list): one upsert per (owner, type,
-- status) a statement changed, whatever number of rows it wrote, so a bulk insert or delete does not
-- rewrite one count row per row. Counts are written in key order, so two statements never lock two
-- count rows in opposite orders. An update that changes no owner, type or status writes nothing.
CREATE FUNCTION "list_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (user_id, environment, list, type, status, n)
  SELECT user_id, environment, TG_TABLE_NAME, type::text, status::text, count(*) FROM changed_rows
   GROUP BY 1, 2, 4, 5 ORDER BY 1, 2, 4, 5
  ON CONFLICT (user_id, environment, list, type, status) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "list_counts_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (user_id, environment, list, type, status, n)
  SELECT user_id, environment, TG_TABLE_NAME, type::text, status::text, -count(*) FROM changed_rows
   GROUP BY 1, 2, 4, 5 ORDER BY 1, 2, 4, 5
  ON CONFLICT (user_id, environment, list, type, status) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "list_counts_move"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (user_id, environment, list, type, status, n)
  SELECT user_id, environment, TG_TABLE_NAME, type, status, sum(d) FROM (
      SELECT user_id, environment, type::text AS type, status::text AS status, -1 AS d FROM rows_before
      UNION ALL
      SELECT user_id, environment, type::text, status::text, 1 FROM rows_after
    ) moved
   GROUP BY 1, 2, 4, 5 HAVING sum(d) <> 0 ORDER BY 1, 2, 4, 5
  ON CONFLICT (user_id, environment, list, type, status) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- TRUNCATE fires no row trigger: the list's counts go with its rows.
CREATE FUNCTION "list_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM list_counts WHERE list = TG_TABLE_NAME;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "bill_records_list_counts_insert" AFTER INSERT ON "bill_records" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_add"();
--> statement-breakpoint
CREATE TRIGGER "bill_records_list_counts_delete" AFTER DELETE ON "bill_records" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_remove"();
--> statement-breakpoint
CREATE TRIGGER "bill_records_list_counts_update" AFTER UPDATE ON "bill_records" REFERENCING OLD TABLE AS rows_before NEW TABLE AS rows_after FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_move"();
--> statement-breakpoint
CREATE TRIGGER "bill_records_list_counts_truncate" AFTER TRUNCATE ON "bill_records" FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_truncate"();
--> statement-breakpoint
CREATE TRIGGER "wallet_transactions_list_counts_insert" AFTER INSERT ON "wallet_transactions" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_add"();
--> statement-breakpoint
CREATE TRIGGER "wallet_transactions_list_counts_delete" AFTER DELETE ON "wallet_transactions" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_remove"();
--> statement-breakpoint
CREATE TRIGGER "wallet_transactions_list_counts_update" AFTER UPDATE ON "wallet_transactions" REFERENCING OLD TABLE AS rows_before NEW TABLE AS rows_after FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_move"();
--> statement-breakpoint
CREATE TRIGGER "wallet_transactions_list_counts_truncate" AFTER TRUNCATE ON "wallet_transactions" FOR EACH STATEMENT EXECUTE FUNCTION "list_counts_truncate"();

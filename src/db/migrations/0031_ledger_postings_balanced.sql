-- Every posting balances, whoever writes it: two or more entries summing to zero. ledger.post checks
-- its lines, but the one-statement money writes (settle-held, bill-writes, transfer-store) insert
-- postings and entries in plain SQL; the database now refuses, at commit, any transaction that leaves
-- a posting it touched unbalanced, on PostgreSQL and PGlite alike. Deferred: the entries of a posting
-- arrive one statement (or one CTE) at a time. The check reads one posting's entries by this index;
-- IF NOT EXISTS lets an operator with a large ledger build it beforehand with CREATE INDEX
-- CONCURRENTLY under this name (docs/production.md), as for 0027.
CREATE INDEX IF NOT EXISTS "ledger_entries_posting_idx" ON "ledger_entries" USING btree ("posting_id");--> statement-breakpoint
-- Own SQLSTATE 23514 (check_violation) and the constraint name `ledger_postings_balanced`: a broken
-- write path is the service's fault, never the caller's (error-mapping answers 500).
CREATE FUNCTION ledger_check_posting_balanced() RETURNS trigger AS $$
DECLARE
  posting uuid;
  entries bigint;
  total numeric;
BEGIN
  IF TG_TABLE_NAME = 'ledger_postings' THEN
    posting := NEW.id;
  ELSE
    posting := NEW.posting_id;
  END IF;
  SELECT count(*), coalesce(sum(amount), 0) INTO entries, total FROM ledger_entries WHERE posting_id = posting;
  IF entries < 2 OR total <> 0 THEN
    RAISE EXCEPTION 'ledger posting % is unbalanced: % entries summing to % kobo', posting, entries, total
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_postings_balanced', TABLE = TG_TABLE_NAME,
        DETAIL = 'A posting needs two or more entries that sum to zero; the transaction was rolled back.';
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
-- Both tables: the postings trigger catches a posting written with no entries, the entries trigger
-- an entry added to a posting written earlier.
CREATE CONSTRAINT TRIGGER ledger_postings_balanced AFTER INSERT ON ledger_postings
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_posting_balanced();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_posting_balanced();

-- A scheduled run whose reference another bill of the owner already holds is counted and not paid;
-- it is now kept on its schedule with the reason. A constant default: no table rewrite.
ALTER TABLE "bill_schedules" ADD COLUMN "skipped_runs" jsonb DEFAULT '[]'::jsonb NOT NULL;
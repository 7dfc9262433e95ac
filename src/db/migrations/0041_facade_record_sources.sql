-- Facade mode: which of a record's kinds the gap-filling job took. A webhook is a repeat of a kind the job found
-- (it cannot know the webhook's id), but not of another webhook's kind: two webhooks are told apart by their id.
-- Rows written before cannot tell who took their kinds: they keep the rule they were written under (every kind
-- counts as found), so no event already streamed is streamed again.
ALTER TABLE "facade_record_states" ADD COLUMN "kinds_filled" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
UPDATE "facade_record_states" SET "kinds_filled" = "kinds_taken";

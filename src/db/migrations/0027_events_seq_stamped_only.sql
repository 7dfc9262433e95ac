-- The two `seq` indexes keep stamped rows only. Every event is inserted unstamped and stamped by a
-- later update, so a full index gained a null entry per event that turned dead at the stamp; until
-- vacuum removed them, the relay's max(seq) walked every one of them on each round (a backward scan
-- starts at the nulls' end), and each insert paid for two more index entries. Readers only ask for
-- stamped rows. IF NOT EXISTS lets an operator with a large events table build both beforehand with
-- CREATE INDEX CONCURRENTLY under these names (see docs/production.md), so this migration only drops.
CREATE UNIQUE INDEX IF NOT EXISTS "events_seq_stamped_key" ON "events" USING btree ("seq") WHERE "events"."seq" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_owner_seq_stamped_idx" ON "events" USING btree ("user_id","environment","seq") WHERE "events"."seq" is not null;--> statement-breakpoint
DROP INDEX IF EXISTS "events_seq_key";--> statement-breakpoint
DROP INDEX IF EXISTS "events_owner_seq_idx";

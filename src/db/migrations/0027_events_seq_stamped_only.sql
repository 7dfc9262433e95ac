-- The two `seq` indexes keep stamped rows only. Every event is inserted unstamped and stamped by a
-- later update, so a full index gained a null entry per event that turned dead at the stamp and
-- stayed until vacuum. The planner could take those nulls for the relay's `seq is null` lookup, as a
-- bitmap scan, which never marks dead entries: each round then read every event stamped since the
-- last vacuum. Now the partial unstamped index is the only path to unstamped rows, and each insert
-- writes two index entries fewer. Readers only ask for stamped rows. IF NOT EXISTS lets an operator
-- with a large events table build both beforehand with CREATE INDEX CONCURRENTLY under these names
-- (see docs/production.md), so that this migration only drops the old ones.
CREATE UNIQUE INDEX IF NOT EXISTS "events_seq_stamped_key" ON "events" USING btree ("seq") WHERE "events"."seq" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_owner_seq_stamped_idx" ON "events" USING btree ("user_id","environment","seq") WHERE "events"."seq" is not null;--> statement-breakpoint
DROP INDEX IF EXISTS "events_seq_key";--> statement-breakpoint
DROP INDEX IF EXISTS "events_owner_seq_idx";

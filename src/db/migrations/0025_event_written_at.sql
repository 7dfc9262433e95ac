-- When each event row was written, for the relay's commit → seq lag (see schema.ts). Added without a
-- default first: a volatile default on ADD COLUMN would rewrite the whole events table under an
-- exclusive lock. The default then applies to new rows only; rows already there keep null.
ALTER TABLE "events" ADD COLUMN "written_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "written_at" SET DEFAULT clock_timestamp();

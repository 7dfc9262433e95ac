-- Webhook deliveries and their jobs are no longer written by the request that writes the event:
-- the relay fans each stamped event out, in batches, in its own transaction (domain/events/fan-out.ts).
-- `event_fan_out` holds how far it has gone. It starts at the highest `seq` stamped now: every event
-- stamped before this release had its deliveries written with it. Events still unstamped, and any
-- that an older instance's relay stamps while a rolling upgrade runs, are above it and are fanned
-- out by the new relay; those an older instance wrote already have their deliveries, which the
-- unique (event_id, endpoint_id) index keeps from being written twice. `trace_context` is nullable:
-- no table rewrite.
CREATE TABLE "event_fan_out" (
	"id" integer PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO "event_fan_out" ("id", "seq") SELECT 1, coalesce(max("seq"), 0) FROM "events";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "trace_context" jsonb;

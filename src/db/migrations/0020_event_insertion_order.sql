DROP INDEX "events_unstamped_idx";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "ordinal" bigserial NOT NULL;--> statement-breakpoint
CREATE INDEX "events_unstamped_idx" ON "events" USING btree ("txid","ordinal") WHERE "events"."seq" is null;
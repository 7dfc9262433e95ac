DROP INDEX "jobs_due_idx";--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "lane" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "tenant" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "concurrency_key" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "lease_token" uuid;--> statement-breakpoint
-- Jobs queued before lanes existed: give them the lane and tenant the code would (see src/domain/jobs/lanes.ts).
UPDATE "jobs" SET "lane" = CASE
    WHEN "kind" = 'webhook.deliver' THEN 'webhooks'
    WHEN "kind" LIKE 'retention.%' THEN 'maintenance'
    WHEN "kind" IN ('bill.status-poll', 'deposit.reconcile', 'payout.reconcile', 'offramp.reconcile') THEN 'polling'
    ELSE 'money' END
  WHERE "status" = 'pending';--> statement-breakpoint
UPDATE "jobs" SET "tenant" = e."user_id"::text, "concurrency_key" = d."endpoint_id"::text
  FROM "webhook_deliveries" d JOIN "webhook_endpoints" e ON e."id" = d."endpoint_id"
  WHERE "jobs"."status" = 'pending' AND "jobs"."kind" = 'webhook.deliver' AND d."id"::text = "jobs"."payload"->>'deliveryId';--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "consecutive_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "circuit_open_until" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "jobs_lane_tenant_due_idx" ON "jobs" USING btree ("lane","tenant","run_at") WHERE "jobs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "jobs_concurrency_key_idx" ON "jobs" USING btree ("concurrency_key") WHERE "jobs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "jobs_tenant_pending_idx" ON "jobs" USING btree ("tenant") WHERE "jobs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("updated_at") WHERE "jobs"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");
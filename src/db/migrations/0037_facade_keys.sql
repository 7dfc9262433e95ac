CREATE TABLE "facade_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"operation" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text NOT NULL,
	"answer" jsonb,
	"keyed" boolean NOT NULL,
	"match" jsonb,
	"credential_sealed" text,
	"sent_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"queued_at" timestamp with time zone,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"resolution_note" text,
	"matched_reference" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "facade_keys_key" ON "facade_keys" USING btree ("user_id","environment","operation","key");--> statement-breakpoint
CREATE UNIQUE INDEX "facade_keys_matched_reference" ON "facade_keys" USING btree ("user_id","environment","matched_reference") WHERE matched_reference is not null;--> statement-breakpoint
CREATE INDEX "facade_keys_unknown" ON "facade_keys" USING btree ("sent_at") WHERE state = 'unknown';
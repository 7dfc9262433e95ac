CREATE TABLE "operation_transitions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"operation_id" uuid NOT NULL,
	"from_status" text NOT NULL,
	"to_status" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "operation_transitions_operation_idx" ON "operation_transitions" USING btree ("kind","operation_id","id");
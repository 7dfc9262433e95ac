CREATE TYPE "public"."offramp_status" AS ENUM('initiated', 'deposit_received', 'processing', 'fiat_sent', 'completed', 'failed', 'expired', 'refunded');--> statement-breakpoint
CREATE TABLE "offramp_orders" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"reference" text NOT NULL,
	"provider" text NOT NULL,
	"provider_order_id" text NOT NULL,
	"token" text NOT NULL,
	"network" text NOT NULL,
	"decimals" integer NOT NULL,
	"amount_raw" numeric(39,0) NOT NULL,
	"sender_fee_raw" numeric(39,0) NOT NULL,
	"transaction_fee_raw" numeric(39,0) NOT NULL,
	"rate" text NOT NULL,
	"fiat" text NOT NULL,
	"fiat_amount_minor" bigint NOT NULL,
	"receive_address" text NOT NULL,
	"valid_until" timestamp with time zone NOT NULL,
	"institution_code" text NOT NULL,
	"bank_name" text NOT NULL,
	"account_number" text NOT NULL,
	"account_name" text NOT NULL,
	"memo" text,
	"refund_address" text,
	"status" "offramp_status" DEFAULT 'initiated' NOT NULL,
	"failure_reason" text,
	"tx_hash" text,
	"idempotency_key" text,
	"request_hash" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "offramp_orders" ADD CONSTRAINT "offramp_orders_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "offramp_orders_owner_reference_key" ON "offramp_orders" USING btree ("user_id","environment","reference");--> statement-breakpoint
CREATE UNIQUE INDEX "offramp_orders_owner_idempotency_key" ON "offramp_orders" USING btree ("user_id","environment","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "offramp_orders_provider_order_key" ON "offramp_orders" USING btree ("provider","provider_order_id");--> statement-breakpoint
CREATE INDEX "offramp_orders_owner_created_idx" ON "offramp_orders" USING btree ("user_id","environment","created_at");
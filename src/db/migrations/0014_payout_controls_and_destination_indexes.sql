CREATE TABLE "api_key_controls" (
	"api_key_id" uuid PRIMARY KEY NOT NULL,
	"max_payout_kobo" bigint,
	"max_daily_kobo" bigint,
	"max_daily_count" integer,
	"max_hourly_count" integer,
	"ip_allow_list" text[],
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_key_usage" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"credential_id" text NOT NULL,
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"reference" text NOT NULL,
	"amount" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_key_controls" ADD CONSTRAINT "api_key_controls_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_key_usage" ADD CONSTRAINT "payout_key_usage_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payout_key_usage_credential_idx" ON "payout_key_usage" USING btree ("credential_id","created_at");--> statement-breakpoint
CREATE INDEX "payment_methods_bank_account_idx" ON "payment_methods" USING btree ("user_id","environment","bank_code","account_number","created_at") WHERE "payment_methods"."type" = 'bank_account' and "payment_methods"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "payouts_destination_idx" ON "payouts" USING btree ("user_id","environment","bank_code","account_number","created_at");
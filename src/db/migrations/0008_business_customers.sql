CREATE TYPE "public"."business_customer_status" AS ENUM('active', 'disabled');--> statement-breakpoint
CREATE TABLE "business_customers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"business_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"name" text NOT NULL,
	"phone" text,
	"email" text,
	"external_ref" text,
	"status" "business_customer_status" DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "business_customers" ADD CONSTRAINT "business_customers_business_id_businesses_id_fk" FOREIGN KEY ("business_id") REFERENCES "public"."businesses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "business_customers_business_idx" ON "business_customers" USING btree ("business_id","environment","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "business_customers_external_ref_key" ON "business_customers" USING btree ("business_id","environment","external_ref") WHERE "business_customers"."external_ref" is not null;
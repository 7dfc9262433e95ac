-- Facade mode's gap-filling job: each upstream record's state as its events set it (the kinds taken for it, so
-- one found by listing and one delivered by webhook are taken once; the newest event's kind and time, so an
-- older one never moves it back), and on each account's inbound row the sealed read key the job lists with.
CREATE TABLE "facade_record_states" (
	"user_id" uuid NOT NULL,
	"environment" "environment" NOT NULL,
	"record_group" text NOT NULL,
	"reference" text NOT NULL,
	"state_kind" text NOT NULL,
	"state_at" timestamp with time zone NOT NULL,
	"kinds_taken" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "facade_record_states_user_id_environment_record_group_reference_pk" PRIMARY KEY("user_id","environment","record_group","reference")
);
--> statement-breakpoint
ALTER TABLE "facade_inbound_secrets" ADD COLUMN "read_key_sealed" text;--> statement-breakpoint
ALTER TABLE "facade_inbound_secrets" ADD COLUMN "filled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "facade_record_states" ADD CONSTRAINT "facade_record_states_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;
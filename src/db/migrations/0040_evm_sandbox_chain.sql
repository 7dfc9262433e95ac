CREATE TABLE "evm_sandbox_blocks" (
	"network" text NOT NULL,
	"number" bigint NOT NULL,
	"hash" text NOT NULL,
	"parent_hash" text NOT NULL,
	"timestamp" bigint NOT NULL,
	"base_fee_per_gas" numeric(39,0) NOT NULL,
	"gas_used" numeric(39,0) NOT NULL,
	"state_root" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evm_sandbox_blocks_network_number_pk" PRIMARY KEY("network","number")
);
--> statement-breakpoint
CREATE TABLE "evm_sandbox_heads" (
	"network" text PRIMARY KEY NOT NULL,
	"state_root" "bytea" NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"producer" text,
	"producer_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evm_sandbox_logs" (
	"network" text NOT NULL,
	"block_number" bigint NOT NULL,
	"log_index" integer NOT NULL,
	"transaction_hash" text NOT NULL,
	"address" text NOT NULL,
	"topic0" text,
	"topic1" text,
	"topic2" text,
	"topic3" text,
	"data" "bytea" NOT NULL,
	CONSTRAINT "evm_sandbox_logs_network_block_number_log_index_pk" PRIMARY KEY("network","block_number","log_index")
);
--> statement-breakpoint
CREATE TABLE "evm_sandbox_mempool" (
	"network" text NOT NULL,
	"hash" text NOT NULL,
	"sender" text NOT NULL,
	"nonce" bigint NOT NULL,
	"raw" "bytea" NOT NULL,
	"arrival" bigserial NOT NULL,
	"priority" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evm_sandbox_mempool_network_hash_pk" PRIMARY KEY("network","hash")
);
--> statement-breakpoint
CREATE TABLE "evm_sandbox_nodes" (
	"key" "bytea" PRIMARY KEY NOT NULL,
	"value" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evm_sandbox_transactions" (
	"network" text NOT NULL,
	"hash" text NOT NULL,
	"block_number" bigint NOT NULL,
	"position" integer NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text,
	"nonce" bigint NOT NULL,
	"raw" "bytea" NOT NULL,
	"status" text NOT NULL,
	"gas_used" numeric(39,0) NOT NULL,
	"effective_gas_price" numeric(39,0) NOT NULL,
	"data_fee" numeric(39,0) NOT NULL,
	"revert_reason" text,
	CONSTRAINT "evm_sandbox_transactions_network_hash_pk" PRIMARY KEY("network","hash")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "evm_sandbox_blocks_hash_key" ON "evm_sandbox_blocks" USING btree ("network","hash");--> statement-breakpoint
CREATE INDEX "evm_sandbox_logs_address_idx" ON "evm_sandbox_logs" USING btree ("network","address","block_number");--> statement-breakpoint
CREATE INDEX "evm_sandbox_logs_tx_idx" ON "evm_sandbox_logs" USING btree ("network","transaction_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "evm_sandbox_mempool_sender_nonce_key" ON "evm_sandbox_mempool" USING btree ("network","sender","nonce");--> statement-breakpoint
CREATE INDEX "evm_sandbox_transactions_block_idx" ON "evm_sandbox_transactions" USING btree ("network","block_number");
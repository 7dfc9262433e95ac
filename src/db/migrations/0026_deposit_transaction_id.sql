-- The wallet transaction a deposit opened, so the deposit's start (deposit-writes.ts) reaches it by
-- primary key rather than by the owner's reference. Nullable, no default: adding it
-- rewrites nothing; deposits opened before it keep null and are found by reference.
ALTER TABLE "deposits" ADD COLUMN "transaction_id" uuid;
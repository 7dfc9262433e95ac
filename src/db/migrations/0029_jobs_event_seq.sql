-- A webhook delivery's job carries its event's `seq`: claims take jobs due at the same moment in
-- this order, so an endpoint's first attempts start in commit order. Nullable: no table rewrite.
ALTER TABLE "jobs" ADD COLUMN "event_seq" bigint;

-- The feed across a failover (docs/architecture.md "A promoted standby"). `timeline` is the
-- PostgreSQL timeline the last batch was numbered on; a promoted standby runs on a new one. The
-- first batch numbered on a new timeline moves `seq` forward by more than 2^32 before it takes its
-- block, so no seq a reader could have served from the lost primary is ever handed out again, and
-- records the point it jumped to in `failover_seq` (readers reload their tail when it changes).
-- Null until the first batch records it (no jump then).
alter table feed_head add column timeline int;
alter table feed_head add column failover_seq bigint not null default 0;

-- Partition `signals` by RANGE (seq) so the purge can drop whole partitions (signals/partitions.ts).
-- seq grows with time, so a range of seq is a slice of time, and every read (a seq window, a
-- primary-key probe) stays one index range in one or two partitions.
--
-- The existing table becomes the first partition as it is (its rows are not copied): it is renamed,
-- the new partitioned table is created like it, and it is attached for seq up to the head plus one
-- million (the board's first open partition). Its indexes are taken over by the parent's (attach
-- matches them by definition), except `id`: a unique index on a partitioned table must include the
-- partition key, so each partition has its own unique index on `id` (made with the partition,
-- signals/partitions.ts) and the parent none. Signal ids are 20 random characters (~119 bits) made
-- by the writer, never by clients, so they are unique across partitions as well. The per-partition
-- unique index also tells the planner that a by-id probe finds at most one row in each partition,
-- whatever the table statistics.
--
-- `signals_kept` is the default partition: it holds the rows carried forward out of a partition the
-- sweeper drops (pinned signals), which no other partition's range covers once it is gone, and it
-- would catch an insert above the last partition (the writer and the sweeper create partitions well
-- before the head gets there; the next partition then starts above such rows).
alter table signals rename to signals_s0;
alter table signals_s0 rename constraint signals_pkey to signals_s0_pkey;
alter table signals_s0 rename constraint signals_id_key to signals_s0_id_key;
alter index signals_type_seq_idx rename to signals_s0_type_seq_idx;
alter index signals_origin_seq_idx rename to signals_s0_origin_seq_idx;
alter index signals_tags_idx rename to signals_s0_tags_idx;
alter index signals_created_at_idx rename to signals_s0_created_at_idx;
alter index signals_expires_at_idx rename to signals_s0_expires_at_idx;
alter index signals_ref_id_idx rename to signals_s0_ref_id_idx;
alter index signals_pinned_idx rename to signals_s0_pinned_idx;
alter index signals_removed_at_idx rename to signals_s0_removed_at_idx;
alter index signals_active_idx rename to signals_s0_active_idx;
alter index signals_changed_idx rename to signals_s0_changed_idx;

create table signals (like signals_s0 including defaults) partition by range (seq);
alter table signals add primary key (seq);

do $$
begin
  execute format('alter table signals attach partition signals_s0 for values from (minvalue) to (%s)',
    (select seq from feed_head) + 1000001);
end $$;
create table signals_kept partition of signals default;
create unique index signals_kept_id_key on signals_kept (id);

create index signals_type_seq_idx on signals (type, seq);
create index signals_origin_seq_idx on signals (origin, seq);
create index signals_tags_idx on signals using gin (tags);
create index signals_created_at_idx on signals (created_at);
create index signals_expires_at_idx on signals (expires_at) where not pinned;
create index signals_ref_id_idx on signals (ref_id) where ref_id is not null;
create index signals_pinned_idx on signals (seq) where pinned;
create index signals_removed_at_idx on signals (removed_at) where removed_at is not null;
create index signals_active_idx on signals (expires_at) include (origin) where not pinned and removed_at is null;
create index signals_changed_idx on signals (changed) where changed is not null;

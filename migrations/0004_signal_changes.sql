-- Pins, unpins and removals are numbered the way signals are (feed_head's row lock orders them), so
-- a reader that missed the Redis invalidation sees `feed_head.changes` move on its next check and
-- re-reads exactly the changed rows: the message is a latency optimisation, never the only path.
alter table feed_head add column changes bigint not null default 0;
alter table signals add column changed bigint;
create index signals_changed_idx on signals (changed) where changed is not null;

-- One-row tables: give the planner their real size now rather than its guess for an unanalysed table.
analyze feed_head;
analyze board;

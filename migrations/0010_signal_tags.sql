-- Filtered reads cost one page of index work (docs/architecture.md, "Reading far behind the head").
-- A read drives from one ordered index range, `(key, seq)`, and checks its other filters per row:
-- `(type, seq)` and `(origin, seq)` exist (0001); tags get a table of their own, one row per
-- (tag, signal), because a GIN index on the array cannot hand back one tag's signals in seq order.
--
-- `signal_tags` is partitioned like `signals`, partition for partition (the same bounds, named
-- `signal_tags_<suffix>` for `signals_<suffix>`; signals/partitions.ts makes and drops them
-- together), so dropping a partition drops its index entries. Rows carried forward out of a dropped
-- partition take their tag rows with them into `signal_tags_kept`. The publish statement inserts
-- the tag rows; the row purge deletes them with their signal.
create table signal_tags (
  tag text not null,
  seq bigint not null,
  primary key (tag, seq)
) partition by range (seq);

do $$
declare p record;
begin
  for p in
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'signals'::regclass and c.relname <> 'signals_kept'
  loop
    execute format('create table %I partition of signal_tags %s', replace(p.name, 'signals_', 'signal_tags_'), p.bound);
  end loop;
end $$;
create table signal_tags_kept partition of signal_tags default;

insert into signal_tags (tag, seq) select distinct t.tag, x.seq from signals x cross join unnest(x.tags) t(tag);

-- Replies drive from (ref_id, seq) in seq order, as tags do; threads walk it too.
create index signals_ref_seq_idx on signals (ref_id, seq) where ref_id is not null;
drop index signals_ref_id_idx;
-- The tag table replaces the GIN index (never used by a read since reads became seq windows).
drop index signals_tags_idx;

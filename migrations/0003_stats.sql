-- Activity history for GET /sw/stats (decisions.md "Stats"), kept by the sweeper's wire.refresh-stats
-- job so the counts survive expiry and purging. One row per (minute, origin): a bucket of any whole
-- number of minutes sums `signals` and counts distinct origins. Every published signal counts once,
-- at its created_at, whatever happens to it later (expiry, removal, purge).
create table stats_buckets (
  at timestamptz not null,        -- start of the minute, aligned to the Unix epoch
  origin text not null,
  signals integer not null,
  primary key (at, origin)
);

-- How far the rollup has counted: every signal with seq <= last_seq is in stats_buckets, none above.
-- seq is dense and commits in order, so this one number is exact. The purge never deletes above it.
create table stats_rollup (
  one boolean primary key default true check (one),
  last_seq bigint not null default 0,
  rolled_up_at timestamptz
);
insert into stats_rollup default values;

-- The purge of moderation-removed signals (rare rows, so a small partial index).
create index signals_removed_at_idx on signals (removed_at) where removed_at is not null;

-- Active counts (/sw/wire, /sw/stats current) read only live rows, and from the index alone, however
-- many expired rows wait for the purge.
create index signals_active_idx on signals (expires_at) include (origin) where not pinned and removed_at is null;

-- The feed. `seq` is assigned in commit order from feed_head (ARCHITECTURE.md, "The feed invariant"):
-- every batch takes its block of numbers with `update feed_head … returning`, and the row lock
-- orders the batches' commits, so seq is dense and never becomes visible out of order.
create table feed_head (
  one boolean primary key default true check (one),
  seq bigint not null default 0
);
insert into feed_head default values;

create table signals (
  seq bigint primary key,
  id text not null unique,
  origin text not null,
  origin_name text,
  origin_uri text not null,
  origin_verified boolean not null,
  type text not null,
  tags text[] not null default '{}',
  payload text not null,          -- verbatim JSON text: jsonb would reorder keys (decisions.md)
  ref_id text,
  ttl_seconds integer not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  pinned boolean not null default false,
  removed_at timestamptz          -- moderation removal: hidden everywhere at once, purged by the sweeper
);

create index signals_type_seq_idx on signals (type, seq);
create index signals_origin_seq_idx on signals (origin, seq);
create index signals_tags_idx on signals using gin (tags);
create index signals_created_at_idx on signals (created_at);
create index signals_expires_at_idx on signals (expires_at) where not pinned;
create index signals_ref_id_idx on signals (ref_id) where ref_id is not null;
create index signals_pinned_idx on signals (seq) where pinned;

-- The aggregator's own tables, in its own schema (AGGREGATOR_PG_SCHEMA): boards it registered,
-- authorities an operator blocked, and the search index over the boards' active signals.

create table registered_boards (
  authority text primary key,                 -- as in sw://<authority>; one URL per authority
  url text not null unique,                   -- base URL, no trailing slash
  name text not null,
  description text,
  limits jsonb not null,
  features text[] not null,
  list_seq bigserial not null unique,         -- the listing's cursor
  registered_at timestamptz not null default now(),
  status text not null default 'up' check (status in ('up', 'down', 'dropped')), -- dropped: kept for the listing, no longer checked, proxied or followed
  checked_at timestamptz not null default now(),
  last_ok_at timestamptz not null default now(),
  last_error text,
  feed_cursor bigint                          -- the board's nextCursor after what is indexed; null: not followed yet
);

create table blocked_authorities (
  authority text primary key,
  blocked_at timestamptz not null default now()
);

create table indexed_signals (
  seq bigint primary key,                     -- the search cursor; given under index_writes' lock, so in commit order
  board text not null references registered_boards (authority) on delete cascade,
  id text not null,
  type text not null,
  tags text[] not null,
  origin text not null,
  pinned boolean not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  signal json not null,                       -- the signal as the board emitted it (json: its key order kept)
  search tsvector not null,
  checked_at timestamptz not null default now(),
  unique (board, id)
);
create sequence indexed_signals_seq;
create index indexed_signals_search_idx on indexed_signals using gin (search);
create index indexed_signals_tags_idx on indexed_signals using gin (tags);
create index indexed_signals_expires_idx on indexed_signals (expires_at);
create index indexed_signals_checked_idx on indexed_signals (board, checked_at);

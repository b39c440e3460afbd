-- Each board's share of the search index (AGGREGATOR_BOARD_INDEX_ROWS_MAX / _BYTES_MAX), kept beside
-- its registry row in the transaction that indexes a page; a board past it is marked and skipped.
alter table registered_boards
  add column index_rows bigint not null default 0,
  add column index_bytes bigint not null default 0,
  add column over_quota_at timestamptz,         -- set: not followed until its rows expire below the quota
  add column over_quota_reason text;

alter table indexed_signals add column bytes int not null default 0; -- the stored signal's size, counted once

update indexed_signals set bytes = octet_length(signal::text);
update registered_boards r set index_rows = c.n, index_bytes = c.b
  from (select board, count(*) n, sum(bytes) b from indexed_signals group by board) c where c.board = r.authority;

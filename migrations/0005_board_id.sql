-- The board's id: random, made once when this migration runs, never changed. Wake-up channels
-- (Redis pub/sub, LISTEN/NOTIFY) and Redis keys are named after it, so two boards sharing a Redis
-- or a PostgreSQL server never hear each other, whatever their schema names. 32 hex digits (a
-- random UUID without its dashes): safe in a Redis key and in an SQL identifier.
alter table board add column board_id text not null default replace(gen_random_uuid()::text, '-', '')
  check (board_id ~ '^[0-9a-f]{32}$');

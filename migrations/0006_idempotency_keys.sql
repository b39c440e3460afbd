-- Safe retries: a publish sent with an Idempotency-Key reserves (identity, key) for the signal id it
-- is about to store; a retry of the same key finds that id and answers the original signal instead
-- of storing a second one. Rows older than 24 h are dead (a retry then publishes anew) and the
-- sweeper's purge deletes them.
create table idempotency_keys (
  identity text not null,
  key text not null,
  signal_id text not null,
  created_at timestamptz not null default now(),
  primary key (identity, key)
);
create index idempotency_keys_created_at_idx on idempotency_keys (created_at);

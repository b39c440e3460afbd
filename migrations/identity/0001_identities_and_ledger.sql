-- The identity network's tables (docs/identity.md "Running an identity network"), in IDENTITY_PG_SCHEMA.
-- No token is stored: a master token or account credential is kept as HMAC-SHA256(server key, token).

-- The server key, when IDENTITY_SECRET is not set: made once by the first process, shared by all.
create table server_key (
  only_row boolean primary key default true check (only_row),
  key text not null check (length(key) >= 32),
  created_at timestamptz not null default now()
);

-- Accounts: made by the operator's admin API, each with its own credential; they own claimed identities.
create table accounts (
  id text primary key,
  name text not null,
  credential_hash bytea not null unique,
  created_at timestamptz not null default now()
);

-- Identities. bits never goes below zero nor past 2^53 - 1 (JSON numbers stay exact).
-- generation names the current master token: a derived token carries the generation it was made
-- from, so rotating (revoking) the master token kills every token derived from it.
create table identities (
  id text primary key,
  display_name text,
  account_id text references accounts (id),
  token_hash bytea not null unique,
  generation integer not null default 1,
  bits bigint not null default 0 check (bits >= 0 and bits <= 9007199254740991),
  created_at timestamptz not null default now(),
  -- when the identity last received bits (or was made): instant identities decay after IDENTITY_DECAY_DAYS without
  last_earned_at timestamptz not null,
  decayed_at timestamptz,
  card jsonb
);
create index identities_instant_idle on identities (last_earned_at) where account_id is null and decayed_at is null;

-- Transfers, one row per request with an Idempotency-Key (or without one): the answer a retry gets again.
create table transfers (
  id bigserial primary key,
  from_id text not null references identities (id),
  to_id text not null,
  amount bigint not null check (amount > 0),
  memo text not null default '',
  idempotency_key text,
  outcome text not null check (outcome in ('ok', 'insufficient_bits', 'not_found')),
  balance_after bigint not null,
  created_at timestamptz not null default now(),
  unique (from_id, idempotency_key)
);

-- The ledger: every change of a balance, one row per identity touched; a transfer's two rows share its id.
create table ledger (
  id bigserial primary key,
  identity_id text not null references identities (id),
  delta bigint not null,
  kind text not null check (kind in ('grant', 'transfer', 'decay')),
  transfer_id bigint references transfers (id),
  created_at timestamptz not null default now()
);
create index ledger_identity on ledger (identity_id, id);

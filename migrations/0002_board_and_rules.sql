-- The board row (metadata) and publish rules. Seeded from the board file (WIRE_CONFIG); afterwards
-- the admin API and this table are the source of truth.
create table board (
  one boolean primary key default true check (one),
  name text,                      -- null: the default name "main"
  description text,
  allowed_signal_types text[],    -- null: no restriction
  seeded_at timestamptz,
  updated_at timestamptz not null default now()
);
insert into board default values;

create table rules (
  id text primary key,
  rule_type text not null check (rule_type in ('allow', 'deny')),
  identity_id text not null,
  created_at timestamptz not null default now(),
  unique (rule_type, identity_id)
);

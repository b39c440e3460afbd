import { group, int, setting } from '../kinds.js'

// How every connection to PostgreSQL and Redis notices a link that died silently (no FIN, no RST) or
// stalled: keepalive for an idle one, a deadline for one waiting on an answer (docs/operations.md
// "The network drills").

export const links = group(
  'Deadlines and keepalives',
  '(every connection to PostgreSQL and Redis, so a link that dies silently or stalls is found within seconds; [docs/operations.md](docs/operations.md#the-network-drills))',
  {
    DB_CONNECT_TIMEOUT_MS: setting(
      int(100, 600_000, 3000),
      'A connection to PostgreSQL not made within this fails (a publish answers 503, nothing stored).',
    ),
    DB_KEEPALIVE_MS: setting(
      int(0, 3_600_000, 5000),
      'TCP keepalive on every PostgreSQL connection: an idle one whose link died is dropped within about this plus 10 s (Node probes ten times a second apart); `0`: off.',
    ),
    DB_QUERY_TIMEOUT_MS: setting(
      int(0, 3_600_000, 10_000),
      'A statement unanswered this long fails (503, `outcome: unknown` for a publish), its connection dropped; read pools use `READ_STATEMENT_TIMEOUT_MS` plus a second when sooner, pg-boss none; `0`: none.',
    ),
    DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: setting(
      int(0, 3_600_000, 5000),
      "PostgreSQL's `idle_in_transaction_session_timeout` for the server roles' sessions: a transaction a stalled client left open is ended, its locks with it; `0`: never.",
    ),
    REDIS_CONNECT_TIMEOUT_MS: setting(
      int(100, 600_000, 3000),
      'A connection to Redis not made within this is tried again (the budgets count in each process meanwhile).',
    ),
    REDIS_KEEPALIVE_MS: setting(
      int(0, 3_600_000, 5000),
      'TCP keepalive on every Redis connection, as `DB_KEEPALIVE_MS` (what finds an idle subscription dead).',
    ),
    REDIS_COMMAND_TIMEOUT_MS: setting(
      int(0, 600_000, 2000),
      'A Redis command unanswered this long fails (a budget then counts in the process) and its connection is dropped and made again; `0`: none.',
    ),
  },
)

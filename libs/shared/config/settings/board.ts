import { z } from 'zod'
import { choice, flag, group, httpUrl, identifier, int, list, setting, text, url, verbatim } from '../kinds.js'
import { parseHostNames } from '../addresses.js'

// The board's own settings: where it keeps its data, where it listens, what it is called and who may publish.

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
const star = true
const SIZE_AND_SCALE = '([docs/deploy.md](docs/deploy.md#size-and-scale))'

export const database = group('Database and processes', '', {
  DATABASE_URL: setting(text(), 'PostgreSQL connection string (the primary); needed for more than one process.', {
    star,
    shown: 'unset: embedded PGlite',
  }),
  DATABASE_URL_DIRECT: setting(
    text(),
    "Direct (unpooled) connection to the primary, for boot-time migrations and every process's LISTEN; set it when `DATABASE_URL` is a pooler.",
    { shown: '`DATABASE_URL`' },
  ),
  DATABASE_REPLICA_URL: setting(
    text(),
    'Where readers read (a streaming replica); they fall back to the primary while it is down and ask it for what the replica has not replayed yet.',
    { shown: '`DATABASE_URL`' },
  ),
  REDIS_URL: setting(
    text(),
    'Redis for wake-ups, shared rate limits and presence; set it when more than one process serves a board ([docs/wake-ups.md](docs/wake-ups.md)).',
    { star, shown: 'unset: in-process bus (plus LISTEN/NOTIFY on PostgreSQL)' },
  ),
  WIRE_PG_NOTIFY: setting(
    flag('1'),
    'On PostgreSQL, wake-ups also travel by LISTEN/NOTIFY on the primary, so processes without Redis (or while it is down) still wake each other; `0` turns it off ([docs/wake-ups.md](docs/wake-ups.md#listennotify)).',
  ),
  WIRE_PG_SCHEMA: setting(identifier(63, 'public'), "Schema for Wire's tables (pg-boss uses `<schema>_boss`)."),
  // the spec: `0` disables, anything else migrates
  WIRE_AUTO_MIGRATE: setting(
    {
      default: '1',
      schema: z
        .string()
        .default('1')
        .transform((v) => v.trim() !== '0'),
    },
    '`0` disables boot-time migrations (then run a writer with it on, once); any other value migrates.',
  ),
  WIRE_DATA_DIR: setting(verbatim('./.wire'), "The embedded database's directory (one process at a time)."),
  WIRE_EMBEDDED_SHARED_BUFFERS_MB: setting(
    int(1, 65_536, 16),
    `The embedded database's \`shared_buffers\` (PostgreSQL's buffer cache) in MB, all of it resident from the start ${SIZE_AND_SCALE}.`,
  ),
  WIRE_EMBEDDED_MALLOC_ARENAS: setting(
    int(0, 64, 1),
    "glibc's `MALLOC_ARENA_MAX` the single process on the embedded database runs itself again with (`0`: glibc's default; a `MALLOC_ARENA_MAX` in the environment wins).",
  ),
  WIRE_EMBEDDED_WASM_OPTIMIZE: setting(
    flag('0'),
    `\`1\` lets V8 optimise the embedded database's WebAssembly: ~1.5× less CPU on scans for a 0.7–1.1 GB peak at start (\`0\`: the baseline compiler only, a ~200 MiB peak) ${SIZE_AND_SCALE}.`,
  ),
  SERVER_PORT: setting(int(0, 65535, 4000), 'Listen port.'),
  SERVER_HOST: setting(verbatim('0.0.0.0'), 'Listen address.'),
  LOG_LEVEL: setting(
    choice(LOG_LEVELS, 'info'),
    '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; tokens and payloads are never logged.',
  ),
})

export const address = group("The board's public address", '', {
  PUBLIC_WIRE_HOST: setting(
    {
      schema: z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be host or host:port')
        .optional(),
    },
    'The public `host` or `host:port`, never taken from a request: the `sw://` authority of every signal and the board half of token scopes, so set it before the first publish.',
    { star, shown: '`localhost:<port>`' },
  ),
  PUBLIC_WIRE_URL: setting(url(), 'Base URL for links in discovery, onboarding documents, OpenAPI and agent cards.', {
    shown: '`https://<PUBLIC_WIRE_HOST>`; `http://` for `localhost`, `*.localhost` and IP addresses',
  }),
  AGENTS_ALLOWED_HOSTS: setting(
    list(parseHostNames, 'host names or addresses separated by commas, without a port'),
    'Host names or addresses (comma-separated, no port) `/mcp` and `/a2a` accept in `Host` and `Origin` besides the public name and loopback; others get 403 ([docs/agents.md](docs/agents.md#security)).',
  ),
  AGGREGATOR_URL: setting(
    httpUrl(),
    'An aggregator that lists this board, shown as `aggregator` in discovery; metadata only, Wire never calls it.',
  ),
})

export const identity = group('Identity and admin', '', {
  IDENTITY_URL: setting(httpUrl(), 'Identity network that verifies tokens (network mode).', { shown: 'unset: local mode' }),
  LOCAL_IDENTITY_VERIFIED: setting(flag('1'), 'Local mode: `0` makes tokens without an `allow` rule unverified (stricter limits).'),
  FINGERPRINT_SECRET: setting(
    text(),
    "Local mode: the key behind fingerprints; unset, a moved or restored board's key, else derived from `DATABASE_URL` (set it on PostgreSQL) or, embedded, random in `WIRE_DATA_DIR` ([docs/identity.md](docs/identity.md)).",
    { star, shown: 'derived' },
  ),
  // a guessable admin token is an open admin API (failed attempts are budgeted too)
  SERVER_ADMIN_TOKEN: setting(
    { schema: z.string().trim().min(16, 'must be at least 16 characters (e.g. openssl rand -hex 24)').optional() },
    'Bearer token for the admin API, at least 16 characters (`openssl rand -hex 24`); failed attempts are budgeted per address (`ADMIN_FAILURE_RATE_LIMIT_MAX`).',
    { star, shown: 'unset: admin disabled (501)' },
  ),
  WIRE_CONFIG: setting(
    verbatim('./subwire.config.json'),
    'Board file (`name`, `description`, `allow`, `block`, `allowedSignalTypes`): seeds the name, description and types on first boot and adds allow/block rules on every boot.',
  ),
  WIRE_BOARD_NAME: setting(
    text(128),
    "The board's name (1–128 characters) when the board file does not name it, taken once, at the first boot that has it; rename a board with `PATCH /sw/admin/wire` ([docs/protocol.md](docs/protocol.md#config-file)).",
    { shown: 'unset: `main`' },
  ),
})

export const signals = group('Signals and limits', '', {
  SIGNAL_DEFAULT_TTL_SECONDS: setting(int(10, 86400, 43200), 'Lifetime of a signal without `$ttl` (10..86400).'),
  THREAD_BIT_FLOOR: setting(int(0, Number.MAX_SAFE_INTEGER, 1), 'Network mode: bits needed to open a thread (`0`: no gate).'),
  PUBLISH_RATE_LIMIT_MAX: setting(
    int(0, 1_000_000, 120),
    'Publishes per identity per window (verified identities), shared by all writers through Redis; `0` means no limit, as in the reference server.',
  ),
  PUBLISH_RATE_LIMIT_WINDOW_MS: setting(int(1000, 86_400_000, 60_000), 'That window.'),
  UNVERIFIED_RATE_LIMIT_MAX: setting(int(1, 1_000_000, 10), 'Publishes per hour for unverified identities.'),
  UNVERIFIED_THREADS_PER_DAY: setting(int(0, 1_000_000, 1), 'New threads per rolling 24 h for unverified identities.'),
})

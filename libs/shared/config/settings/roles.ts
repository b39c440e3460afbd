import { z } from 'zod'
import { parseAllowHosts } from '../addresses.js'
import { flag, group, identifier, int, list, setting } from '../kinds.js'

// The two roles that are not a board: the aggregator and the identity network.

const ALSO =
  'it also reads `DATABASE_URL`, `REDIS_URL`, `SERVER_PORT`, `PUBLIC_WIRE_URL`, `SERVER_ADMIN_TOKEN`, the `HTTP_*` and per-address settings above'
const DAY = 86400

export const aggregator = group('The aggregator', `([docs/aggregator.md](docs/aggregator.md); ${ALSO})`, {
  AGGREGATOR_PG_SCHEMA: setting(
    identifier(58, 'aggregator'),
    "Schema of the aggregator's tables (registry, search index; pg-boss uses `<schema>_boss`).",
  ),
  AGGREGATOR_ALLOW_HOSTS: setting(
    list(parseAllowHosts, 'host names, addresses or CIDRs separated by commas'),
    'Host names, addresses or CIDRs (`10.0.0.0/8,board.internal`) the aggregator may reach although not public; every other outbound connection goes to public addresses only ([docs/aggregator.md](docs/aggregator.md#outbound-requests)).',
    { shown: 'unset: public addresses only' },
  ),
  AGGREGATOR_RECHECK_SECONDS: setting(int(1, DAY, 300), "How often every registered board's discovery document is fetched again."),
  AGGREGATOR_DOWN_AFTER_SECONDS: setting(
    int(1, 30 * DAY, 900),
    'A board whose checks have failed for this long is marked `down` (the proxy answers 503).',
  ),
  AGGREGATOR_DROP_AFTER_SECONDS: setting(
    int(1, 365 * DAY, 7 * DAY),
    'A board whose checks have failed for this long (at least the down time) is dropped: listed, no longer checked, proxied or searched, until registered again.',
  ),
  AGGREGATOR_FETCH_TIMEOUT_MS: setting(
    int(100, 60_000, 5000),
    "Deadline of a registration's or a check's whole discovery fetch, redirects included.",
  ),
  AGGREGATOR_DISCOVERY_MAX_BYTES: setting(int(1024, 1_048_576, 65_536), 'Largest discovery document accepted.'),
  AGGREGATOR_MAX_BOARDS: setting(int(1, 1_000_000, 1000), 'Boards one aggregator registers; one more is refused with 403.'),
  AGGREGATOR_REGISTER_RATE_LIMIT_MAX: setting(
    int(0, 1_000_000, 20),
    'Registrations per hour per identity and per client address; `0`: off.',
  ),
  AGGREGATOR_SHARED_POLLS: setting(
    flag('1'),
    'Identical anonymous proxied long-polls share one request to the board and its answer; `0` sends each on its own.',
  ),
  AGGREGATOR_CONNECTIONS_PER_BOARD: setting(
    int(1, 100_000, 2048),
    'Outbound connections per board; each waiting proxied long-poll holds one, and requests past it queue.',
  ),
  AGGREGATOR_ANSWER_MAX_BYTES: setting(
    int(65_536, 268_435_456, 8_388_608),
    'Most bytes of one proxied answer, counted as they stream (a shared long-poll reads it whole); past it the answer is cut (shared: 503).',
  ),
  AGGREGATOR_PAGE_MAX_BYTES: setting(
    int(65_536, 67_108_864, 2_097_152),
    'Most decoded bytes of one followed page (the follower asks for as many signals as fit); a larger page marks the board `over_quota`.',
  ),
  AGGREGATOR_BOARD_INDEX_ROWS_MAX: setting(
    int(1, 100_000_000, 50_000),
    "A board's signals in the search index; past it the board is marked over quota and not followed until its rows expire below 90 %.",
  ),
  AGGREGATOR_BOARD_INDEX_BYTES_MAX: setting(int(65_536, 68_719_476_736, 104_857_600), 'The same in bytes of stored signals.'),
  AGGREGATOR_BOARD_PAGES_PER_MINUTE: setting(int(1, 1_000_000, 120), 'Pages the follower reads from one board per minute, at most.'),
  AGGREGATOR_FOLLOW_MAX_BYTES: setting(
    int(65_536, 4_294_967_296, 33_554_432),
    'Decoded bytes of followed pages the process holds at once, all boards together, at least `AGGREGATOR_PAGE_MAX_BYTES` ([aggregator.md](docs/aggregator.md)).',
  ),
  AGGREGATOR_FOLLOW_STALLED_SECONDS: setting(
    int(1, DAY, 60),
    'A followed board whose follower has completed no page read for this long, above its 25 s long-poll, counts as stalled and is logged once ([aggregator.md](docs/aggregator.md#search)).',
  ),
  AGGREGATOR_PIN_HORIZON_SECONDS: setting(
    int(60, 365 * DAY, DAY),
    'A signal its board says is pinned stays searchable this long after it was indexed (not for good).',
  ),
  AGGREGATOR_PROXY_PER_ADDRESS_MAX: setting(
    int(0, 1_000_000, 16),
    'Proxied requests without `wait` one client address may have in flight (long-polls count against `LONG_POLLS_PER_ADDRESS_MAX`); past it 429; `0`: off.',
  ),
  AGGREGATOR_PROXY_PER_BOARD_MAX: setting(
    int(0, 10_000_000, 1024),
    'Requests in flight to one board through the proxy (a shared long-poll counts once); past it 503 for that board; `0`: off.',
  ),
  AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND: setting(
    int(0, 4_294_967_296, 16_777_216),
    "Bytes a second one board's proxied answers may stream through a process (a burst of 4 s of it); past it they wait and new requests to that board get 503 ([aggregator.md](docs/aggregator.md#proxy)); `0`: off.",
  ),
  AGGREGATOR_PROXY_TIMEOUT_MS: setting(
    int(1000, 600_000, 30_000),
    "Deadline of a whole proxied exchange, the answer's last byte included (a long-poll gets its `wait` on top); past it the answer is cut or 503.",
  ),
})

export const identityNetwork = group(
  'The identity network',
  `([docs/identity.md](docs/identity.md#running-an-identity-network); ${ALSO}, \`REGISTER_RATE_LIMIT_MAX\` included)`,
  {
    IDENTITY_PG_SCHEMA: setting(
      identifier(63, 'identity'),
      "Schema of the identity network's tables (identities, accounts, transfers, ledger).",
    ),
    IDENTITY_SECRET: setting(
      { schema: z.string().trim().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)').optional() },
      "Server key (32+ characters) behind every stored token hash and derived token's signature; set it to keep it out of the database; changing it invalidates every token.",
      { shown: 'unset: a random key kept in the schema' },
    ),
    IDENTITY_INSTANT_GRANT_BITS: setting(int(0, 1_000_000_000, 10), 'Bits an instant identity gets once, at registration (never renewed).'),
    IDENTITY_CLAIMED_GRANT_BITS: setting(
      int(0, 1_000_000_000, 100),
      "Bits an account's identity gets when made, or is topped up to when claimed.",
    ),
    IDENTITY_REGISTER_HOURLY_MAX: setting(
      int(0, 100_000_000, 1000),
      'Instant registrations per hour, network-wide (the valve); `0` closes the instant tier (403).',
    ),
    IDENTITY_DECAY_DAYS: setting(
      int(1, 3650, 30),
      'An instant identity that earns no bits for this long decays: its tokens stop verifying, its bits go.',
    ),
    IDENTITY_VERIFY_RATE_LIMIT_MAX: setting(
      int(0, 100_000_000, 60_000),
      "Verifies per client address (a board's process) per minute; `0`: off.",
    ),
    IDENTITY_CALLS_RATE_LIMIT_MAX: setting(
      int(0, 100_000_000, 600),
      'Calls per identity per minute on every token door (verify, derive, balance, transfer, card, rotate); `0`: off.',
    ),
  },
)

export const network = group(
  'A network in one process',
  '([docs/identity.md](docs/identity.md#a-network-in-one-process), for a trial; each role also reads every setting above as it would alone)',
  {
    WIRE_NETWORK_BOARDS: setting(
      int(0, 9, 0),
      '`1`–`9`: `npm start` runs the identity network, an aggregator and this many boards in network mode (on `SERVER_PORT` and the ports after it) in one process, on one database.',
      { shown: '`0`: the single board' },
    ),
    WIRE_NETWORK_AGGREGATOR_PORT: setting(int(1, 65535, 4100), "With `WIRE_NETWORK_BOARDS`: the aggregator's port."),
    WIRE_NETWORK_IDENTITY_PORT: setting(
      int(1, 65535, 4200),
      "With `WIRE_NETWORK_BOARDS`: the identity network's port (the boards' `IDENTITY_URL`).",
    ),
  },
)

import { LIMITS } from '../../domain/index.js'
import { parseTrustProxy } from '../addresses.js'
import { flag, group, int, list, ratio, setting } from '../kinds.js'

// What a board exposed to the public spends, and how each process is tuned.

const SIZE_AND_SCALE = '([docs/deploy.md](docs/deploy.md#size-and-scale))'

export const exposure = group(
  'Public exposure: timeouts, budgets, shedding',
  '([docs/security.md](docs/security.md) has the threat model and every bound)',
  {
    HTTP_REQUEST_TIMEOUT_MS: setting(
      int(1000, 3_600_000, 30_000),
      "A request's headers and body must have arrived within this (slower senders get 408 and lose the connection); never applies to a long-poll's wait.",
    ),
    HTTP_HEADERS_TIMEOUT_MS: setting(int(1000, 3_600_000, 10_000), 'The same for the headers alone (at most `HTTP_REQUEST_TIMEOUT_MS`).'),
    // the idle timeout must outlast the longest long-poll
    HTTP_CONNECTION_TIMEOUT_MS: setting(
      int((LIMITS.maxWaitSeconds + 5) * 1000, 3_600_000, 60_000),
      `A connection with no traffic either way for this long is closed; at least ${(LIMITS.maxWaitSeconds + 5) * 1000}, so it outlasts a ${LIMITS.maxWaitSeconds} s long-poll.`,
    ),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: setting(
      int(1000, 3_600_000, 72_000),
      "How long an idle kept-alive connection stays open between requests (above common load balancers' 60 s).",
    ),
    HTTP_MAX_CONNECTIONS: setting(
      int(0, 10_000_000, 20_000),
      'Open connections per process; connections beyond it are closed at once (`0`: no cap).',
    ),
    HTTP_LISTEN_BACKLOG: setting(
      int(1, 65_535, 4096),
      'Connections the kernel queues for the process to accept (Linux caps it at `net.core.somaxconn`); a front opening thousands at once overflows a smaller queue and its connects time out.',
    ),
    SHED_EVENT_LOOP_DELAY_MS: setting(
      int(0, 60_000, 1000),
      'Past this mean event-loop delay a process answers 503 `unavailable` with `Retry-After` (health and metrics still answer); `0`: off.',
    ),
    SHED_HEAP_USED_RATIO: setting(ratio(0.9), "The same past this share of V8's heap limit; `0`: off."),
    TRUST_PROXY: setting(
      list(parseTrustProxy, '0, a hop count, true, or proxy addresses/CIDRs separated by commas', '0'),
      'Behind a proxy: who may set the client address by `X-Forwarded-For`: a hop count (`1` behind the Gateway or `deploy/nginx`), `true` or proxy addresses/CIDRs; off, the TCP peer ([docs/security.md](docs/security.md#the-client-address-and-trust_proxy)).',
      { star: true, shown: '`0` (off)' },
    ),
    HTTP_FAST_PATH: setting(
      flag('1'),
      "Readers serve `GET /sw/signals` polls and writers `POST /sw/signals` publishes below node's request objects and fastify; `0`: every request through fastify.",
    ),
    CLIENT_IPV6_PREFIX_BITS: setting(
      int(1, 128, 64),
      'Budgets count an IPv6 client by this many leading bits of its address (IPv4 and IPv4-mapped IPv6 exactly).',
    ),
    // per client address (0: off), shared by every process through Redis
    READ_RATE_LIMIT_MAX: setting(
      int(0, 10_000_000, 3000),
      'Requests per client address per window (every read, and every request without a budget of its own; only `/`, `/healthz` and `/readyz` are free); past it 429; `0`: off.',
    ),
    READ_RATE_LIMIT_WINDOW_MS: setting(int(1000, 86_400_000, 60_000), 'That window.'),
    LONG_POLLS_PER_ADDRESS_MAX: setting(
      int(0, 10_000_000, 100),
      'Long-polls one client address may have waiting at once, across readers; `0`: off.',
    ),
    PUBLISH_ADDRESS_RATE_LIMIT_MAX: setting(
      int(0, 10_000_000, 600),
      'Publishes per client address per `PUBLISH_RATE_LIMIT_WINDOW_MS`, whatever the tokens; `0`: off.',
    ),
    PUBLISH_ATTEMPT_RATE_LIMIT_MAX: setting(
      int(0, 10_000_000, 1200),
      'Publish attempts per client address per `PUBLISH_RATE_LIMIT_WINDOW_MS`, spent before any other work (refused, invalid and replayed ones count); `0`: off.',
    ),
    ADMIN_FAILURE_RATE_LIMIT_MAX: setting(
      int(0, 10_000_000, 20),
      "Failed admin authentications per client address per 15 minutes; past it the address's further wrong tokens get 429, the right token is always accepted; `0`: off.",
    ),
    REGISTER_RATE_LIMIT_MAX: setting(
      int(0, 10_000_000, 30),
      'New identities (MCP `register_identity`; on the identity network, `POST /identity/register`) per client address per hour; `0`: off.',
    ),
    NEW_IDENTITY_RATE_LIMIT_MAX: setting(
      int(0, 10_000_000, 300),
      'Local mode: publishes per minute, board-wide, by identities with no signal on the board yet (new tokens cost nothing to make); `0`: off.',
    ),
  },
)

export const tuning = group('Sweeper and tuning', '', {
  SIGNAL_SWEEP_INTERVAL_SECONDS: setting(int(1, 86400, 60), 'How often the sweeper purges and rolls up stats (sub-minute works).'),
  SIGNAL_SWEEP_GRACE_SECONDS: setting(int(0, 30 * 86400, 86400), 'How long an expired signal stays readable by id before it is purged.'),
  WAKE_FALLBACK_POLL_MS: setting(
    int(50, 60_000, 1000),
    'Readers re-check the feed head this often even without a wake-up (a lost wake-up costs at most this much latency).',
  ),
  READER_TAIL_SIZE: setting(
    int(0, 1_000_000, 5000),
    'Recent signals each reader (and each agents process) keeps in memory, serialised once, so reads inside it need no query; `0` sends every read to the database.',
  ),
  READER_TAIL_MAX_BYTES: setting(
    int(1_048_576, 17_179_869_184, 67_108_864),
    "The tail's bound in bytes besides its entries, counted as 3 × each payload + 512; past it the oldest signals leave the tail ([docs/security.md](docs/security.md#per-process-guards)).",
    { shown: '`67108864` (64 MiB)' },
  ),
  READER_CHUNK_CACHE_MAX_BYTES: setting(
    int(0, 17_179_869_184, 50_331_648),
    "Each reader's cache of 1,024-seq chunks below the head, for reads far behind it, bounded by estimated bytes; `0`: off ([docs/architecture.md](docs/architecture.md#the-chunk-cache)).",
    { shown: '`50331648` (48 MiB)' },
  ),
  READ_DB_CONCURRENCY_MAX: setting(
    int(0, 10_000, 16),
    'First pages read from the database at once per read side; as many more may wait, and past that 503 `unavailable` at once; `0`: no gate ([docs/security.md](docs/security.md#per-process-guards)).',
  ),
  READER_SEMI_SPACE_MB: setting(
    int(0, 1024, 4),
    `V8's young generation (\`--max-semi-space-size\`, MB) a read side runs itself again with (\`0\`: node's default; \`NODE_OPTIONS\` wins) ${SIZE_AND_SCALE}.`,
  ),
  IDLE_GC_INTERVAL_MS: setting(
    int(0, 86_400_000, 10_000),
    `At most one memory-reducing collection (then \`malloc_trim\`) per this many ms, when a read side goes quiet after its RSS grew; \`0\`: never ${SIZE_AND_SCALE}.`,
  ),
  IDLE_GC_RSS_BUDGET_MB: setting(
    int(0, 1_048_576, 200),
    `Over this RSS a read side that grew may collect 2 s after its last idle collection instead of waiting out \`IDLE_GC_INTERVAL_MS\`; \`0\`: no budget ${SIZE_AND_SCALE}.`,
  ),
  READER_MAX_WAITERS: setting(
    int(0, 10_000_000, 20_000),
    'Long-polls (HTTP, MCP and A2A) one process may have waiting at once; one more gets 503 `unavailable` at once; `0`: no cap.',
  ),
  READ_STATEMENT_TIMEOUT_MS: setting(
    int(0, 3_600_000, 5000),
    'PostgreSQL `statement_timeout` of every read pool (a read cut by it answers 503; writes and the embedded database have none); `0`: off.',
  ),
  PUBLISH_MAX_BATCH: setting(int(1, 5000, 500), 'Most signals one group commit carries (`1`: a commit per signal).'),
})

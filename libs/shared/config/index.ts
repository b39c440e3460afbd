import { isIP } from 'node:net'
import { z } from 'zod'
import { LIMITS } from '../domain/index.js'
import { ConfigError } from './errors.js'
import { isLocalOrIp } from './public-host.js'
import { otelEnv, tracingSettings } from './tracing.js'

export { ConfigError }
export { loadBoardFile, type BoardFile } from './board-file.js'
export { formatUnsetForPublicHost, unsetForPublicHost, type UnsetSetting } from './public-host.js'
export type { TracingSettings } from './tracing.js'

// Messages say what a setting expects in plain words; zod's own ("expected number, received NaN") name types, not settings.
const flag = (d: '0' | '1') => z.enum(['0', '1'], { message: 'must be 0 or 1' }).default(d).transform((v) => v === '1')
/** 1000000 → "1,000,000" without Intl: toLocaleString loads ICU's number formatting, some 8 MB of RSS in every process. */
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
const int = (min: number, max: number, d: number) => {
  const expected = `must be a whole number from ${min} to ${max > 99_999 ? grouped(max) : max}`
  return z.coerce.number({ message: expected }).int(expected).min(min, expected).max(max, expected).default(d)
}
const url = (what = 'a URL such as https://host.example') => z.string().url(`must be ${what}`)
const optionalText = z.string().trim().min(1, 'must not be blank').optional()

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** Every setting Wire reads. Nothing else in the code base reads the environment. */
const Env = z.object({
  DATABASE_URL: optionalText, // unset: embedded PGlite in WIRE_DATA_DIR
  DATABASE_URL_DIRECT: optionalText,
  DATABASE_REPLICA_URL: optionalText, // ours: where readers read; default DATABASE_URL
  REDIS_URL: optionalText, // ours; unset: in-process wake bus (plus LISTEN/NOTIFY on PostgreSQL)
  WIRE_PG_NOTIFY: flag('1'), // ours: on PostgreSQL, wake-ups also travel by LISTEN/NOTIFY on the primary
  WIRE_PG_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier').default('public'),
  WIRE_AUTO_MIGRATE: z.string().default('1').transform((v) => v.trim() !== '0'), // the spec: `0` disables, anything else migrates
  WIRE_CONFIG: z.string().min(1).default('./subwire.config.json'),
  WIRE_BOARD_NAME: z.string().trim().min(1, 'must not be blank').max(128, 'must be at most 128 characters').optional(), // ours: names a new board when no board file does
  WIRE_DATA_DIR: z.string().min(1).default('./.wire'),
  WIRE_EMBEDDED_SHARED_BUFFERS_MB: int(1, 65_536, 16), // ours: the embedded database's shared_buffers, resident from its start (db/pglite.ts)
  WIRE_EMBEDDED_MALLOC_ARENAS: int(0, 64, 1), // ours: MALLOC_ARENA_MAX the embedded single process runs itself with (0: glibc's default; MALLOC_ARENA_MAX's own wins)
  WIRE_EMBEDDED_WASM_OPTIMIZE: flag('0'), // ours: 1 lets V8 optimise the embedded database's WebAssembly (TurboFan): faster scans, a 0.7 GB start-up peak; 0 (default) runs the embedded single process with the baseline compiler only (--liftoff-only)
  SERVER_PORT: int(0, 65535, 4000),
  SERVER_HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_WIRE_HOST: z.string().trim().regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be host or host:port').optional(),
  PUBLIC_WIRE_URL: url().optional(),
  AGENTS_ALLOWED_HOSTS: z.string().trim().default(''), // ours: host names /mcp and /a2a accept in Host and Origin besides the public name and loopback
  AGGREGATOR_URL: url().regex(/^https?:\/\//i, 'must be an http(s) URL').optional(), // metadata for discovery only; never called
  IDENTITY_URL: url().regex(/^https?:\/\//i, 'must be an http(s) URL').optional(), // set: network identity mode
  LOCAL_IDENTITY_VERIFIED: flag('1'),
  FINGERPRINT_SECRET: optionalText,
  // a guessable admin token is an open admin API: at least 16 characters (failed attempts are budgeted too)
  SERVER_ADMIN_TOKEN: z.string().trim().min(16, 'must be at least 16 characters (e.g. openssl rand -hex 24)').optional(),
  SIGNAL_DEFAULT_TTL_SECONDS: int(10, 86400, 43200),
  THREAD_BIT_FLOOR: int(0, Number.MAX_SAFE_INTEGER, 1),
  PUBLISH_RATE_LIMIT_MAX: int(0, 1_000_000, 120), // 0: no limit, as in the reference server
  PUBLISH_RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000, 60_000),
  UNVERIFIED_RATE_LIMIT_MAX: int(1, 1_000_000, 10),
  UNVERIFIED_THREADS_PER_DAY: int(0, 1_000_000, 1),
  SIGNAL_SWEEP_INTERVAL_SECONDS: int(1, 86400, 60),
  SIGNAL_SWEEP_GRACE_SECONDS: int(0, 30 * 86400, 86400),
  WAKE_FALLBACK_POLL_MS: int(50, 60_000, 1000),
  READER_TAIL_SIZE: int(0, 1_000_000, 5000), // ours: recent signals each reader keeps in memory (0: every read queries)
  READER_TAIL_MAX_BYTES: int(1_048_576, 17_179_869_184, 67_108_864), // ours: the tail's bound in (estimated) bytes, besides its entries
  READER_CHUNK_CACHE_MAX_BYTES: int(0, 17_179_869_184, 50_331_648), // ours: the chunk cache's bound in (estimated) bytes (0: off)
  READER_SEMI_SPACE_MB: int(0, 1024, 4), // ours: V8's --max-semi-space-size a reader runs itself with (0: node's default; NODE_OPTIONS' own wins)
  IDLE_GC_INTERVAL_MS: int(0, 86_400_000, 10_000), // ours: at most one memory-reducing GC per this when a read side goes quiet after its RSS grew (0: never; libs/shared/runtime/idle-gc.ts)
  IDLE_GC_RSS_BUDGET_MB: int(0, 1_048_576, 200), // ours: over this RSS the idle GC may run 2 s after the last one instead of IDLE_GC_INTERVAL_MS (0: no budget)
  READER_MAX_WAITERS: int(0, 10_000_000, 20_000), // ours: waiting long-polls per process (each read side); past it 503 at once (0: no cap)
  READ_DB_CONCURRENCY_MAX: int(0, 10_000, 16), // ours: first pages read from the database at once per read side (as many more wait; past that 503); 0: no gate
  READ_STATEMENT_TIMEOUT_MS: int(0, 3_600_000, 5000), // ours: PostgreSQL statement_timeout on read pools (0: none)
  PUBLISH_MAX_BATCH: int(1, 5000, 500), // ours: most signals one group commit may carry (1 = a commit per signal)
  // ours: timeouts and caps per process (docs/security.md). The idle timeout must outlast the longest long-poll.
  HTTP_REQUEST_TIMEOUT_MS: int(1000, 3_600_000, 30_000),
  HTTP_HEADERS_TIMEOUT_MS: int(1000, 3_600_000, 10_000),
  HTTP_CONNECTION_TIMEOUT_MS: int((LIMITS.maxWaitSeconds + 5) * 1000, 3_600_000, 60_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(1000, 3_600_000, 72_000),
  HTTP_MAX_CONNECTIONS: int(0, 10_000_000, 20_000), // 0: no cap
  HTTP_LISTEN_BACKLOG: int(1, 65_535, 4096), // ours: listen's backlog (the kernel caps it at net.core.somaxconn)
  SHED_EVENT_LOOP_DELAY_MS: int(0, 60_000, 1000), // 0: off
  SHED_HEAP_USED_RATIO: z.coerce.number({ message: 'must be a number from 0 to 1' }).min(0, 'must be a number from 0 to 1').max(1, 'must be a number from 0 to 1').default(0.9), // of V8's heap limit; 0: off
  TRUST_PROXY: z.string().trim().default('0'),
  // ours: per client address (0: off), shared by every process through Redis
  READ_RATE_LIMIT_MAX: int(0, 10_000_000, 3000),
  READ_RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000, 60_000),
  LONG_POLLS_PER_ADDRESS_MAX: int(0, 10_000_000, 100),
  PUBLISH_ADDRESS_RATE_LIMIT_MAX: int(0, 10_000_000, 600),
  PUBLISH_ATTEMPT_RATE_LIMIT_MAX: int(0, 10_000_000, 1200), // anything sent to a publish door, before any work on it
  ADMIN_FAILURE_RATE_LIMIT_MAX: int(0, 10_000_000, 20), // failed admin authentications per address per 15 min
  REGISTER_RATE_LIMIT_MAX: int(0, 10_000_000, 30), // register_identity per address per hour
  CLIENT_IPV6_PREFIX_BITS: int(1, 128, 64), // budgets count an IPv6 client by this prefix
  HTTP_FAST_PATH: flag('1'), // ours: serve GET /sw/signals below node's request objects (0: every request through fastify)
  NEW_IDENTITY_RATE_LIMIT_MAX: int(0, 10_000_000, 300), // local mode: publishes by identities new to this board, per minute, board-wide
  // ours: the aggregator role (docs/aggregator.md)
  AGGREGATOR_PG_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,57}$/, 'must be a lower-case SQL identifier').default('aggregator'),
  AGGREGATOR_ALLOW_HOSTS: z.string().trim().default(''), // hosts or CIDRs the aggregator may reach although not public
  AGGREGATOR_RECHECK_SECONDS: int(1, 86400, 300),
  AGGREGATOR_DOWN_AFTER_SECONDS: int(1, 30 * 86400, 900),
  AGGREGATOR_DROP_AFTER_SECONDS: int(1, 365 * 86400, 7 * 86400),
  AGGREGATOR_FETCH_TIMEOUT_MS: int(100, 60_000, 5000),
  AGGREGATOR_DISCOVERY_MAX_BYTES: int(1024, 1_048_576, 65_536),
  AGGREGATOR_MAX_BOARDS: int(1, 1_000_000, 1000),
  AGGREGATOR_REGISTER_RATE_LIMIT_MAX: int(0, 1_000_000, 20), // per identity and per address per hour; 0: off
  AGGREGATOR_CONNECTIONS_PER_BOARD: int(1, 100_000, 2048),
  AGGREGATOR_SHARED_POLLS: flag('1'), // identical anonymous proxied long-polls share one request to the board
  AGGREGATOR_ANSWER_MAX_BYTES: int(65_536, 268_435_456, 8_388_608), // most bytes of one proxied answer (streamed, or a shared poll's, read whole)
  AGGREGATOR_PAGE_MAX_BYTES: int(65_536, 67_108_864, 2_097_152), // most decoded bytes of one followed page (its limit is chosen to fit)
  AGGREGATOR_BOARD_INDEX_ROWS_MAX: int(1, 100_000_000, 50_000), // a board's rows in the search index; past it the board is marked over quota and skipped
  AGGREGATOR_BOARD_INDEX_BYTES_MAX: int(65_536, 68_719_476_736, 104_857_600),
  AGGREGATOR_BOARD_PAGES_PER_MINUTE: int(1, 1_000_000, 120), // followed pages per board per minute
  AGGREGATOR_PIN_HORIZON_SECONDS: int(60, 365 * 86400, 86400), // a pinned signal stays searchable this long after it was indexed
  AGGREGATOR_PROXY_PER_ADDRESS_MAX: int(0, 1_000_000, 16), // proxied requests without wait one client address may have in flight (0: off)
  AGGREGATOR_PROXY_PER_BOARD_MAX: int(0, 10_000_000, 1024), // requests in flight to one board (a shared poll counts once; 0: off)
  AGGREGATOR_PROXY_TIMEOUT_MS: int(1000, 600_000, 30_000), // whole proxied exchange, answer included; a long-poll gets its wait on top
  // ours: the identity network role (docs/identity.md "Running an identity network")
  IDENTITY_PG_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier').default('identity'),
  IDENTITY_SECRET: z.string().trim().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)').optional(), // unset: a random key kept in the schema
  IDENTITY_INSTANT_GRANT_BITS: int(0, 1_000_000_000, 10),
  IDENTITY_CLAIMED_GRANT_BITS: int(0, 1_000_000_000, 100),
  IDENTITY_REGISTER_HOURLY_MAX: int(0, 100_000_000, 1000), // instant registrations per hour, network-wide; 0 closes the instant tier
  IDENTITY_DECAY_DAYS: int(1, 3650, 30),
  IDENTITY_VERIFY_RATE_LIMIT_MAX: int(0, 100_000_000, 60_000), // verifies per client address (a board) per minute; 0: off
  IDENTITY_CALLS_RATE_LIMIT_MAX: int(0, 100_000_000, 600), // calls per identity per minute on every token door (verify included); 0: off
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  // OpenTelemetry traces (config/tracing.ts): off unless an endpoint is set
  OTEL_SDK_DISABLED: otelEnv.OTEL_SDK_DISABLED,
  OTEL_TRACES_EXPORTER: otelEnv.OTEL_TRACES_EXPORTER,
  OTEL_EXPORTER_OTLP_ENDPOINT: otelEnv.OTEL_EXPORTER_OTLP_ENDPOINT,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otelEnv.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  OTEL_EXPORTER_OTLP_PROTOCOL: otelEnv.OTEL_EXPORTER_OTLP_PROTOCOL,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otelEnv.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
  OTEL_SERVICE_NAME: otelEnv.OTEL_SERVICE_NAME,
  OTEL_TRACES_SAMPLER: otelEnv.OTEL_TRACES_SAMPLER,
  OTEL_TRACES_SAMPLER_ARG: otelEnv.OTEL_TRACES_SAMPLER_ARG,
  OTEL_BSP_SCHEDULE_DELAY: otelEnv.OTEL_BSP_SCHEDULE_DELAY,
})

/**
 * TRUST_PROXY: `0`/`false` (the default: req.ip is the TCP peer), a hop count (`1`: one proxy in
 * front, e.g. the Gateway), `true` (trust every X-Forwarded-For hop; only behind a proxy that
 * overwrites it), or a comma-separated list of proxy addresses and CIDRs.
 */
function parseTrustProxy(v: string): boolean | number | string[] {
  const lower = v.toLowerCase()
  if (lower === 'false' || lower === 'off') return false
  if (lower === 'true') return true
  if (/^\d{1,3}$/.test(v)) return Number(v) === 0 ? false : Number(v)
  const list = v.split(',').map((x) => x.trim()).filter(Boolean)
  const bad = list.filter((x) => {
    const [addr = '', bits, extra] = x.split('/')
    const family = isIP(addr)
    if (!family || extra !== undefined) return true
    return bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))
  })
  if (list.length === 0 || bad.length) throw new ConfigError(`invalid configuration:\n  TRUST_PROXY: not a hop count or a list of addresses/CIDRs: ${bad.join(', ')}`)
  return list
}

/** AGENTS_ALLOWED_HOSTS: a comma-separated list of host names or addresses (lower-case, no port). */
function parseHostNames(v: string): string[] {
  const names = v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)
  const bad = names.filter((x) => !isIP(x.replace(/^\[(.*)\]$/, '$1')) && !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(x))
  if (bad.length) throw new ConfigError(`invalid configuration:\n  AGENTS_ALLOWED_HOSTS: not a host name or address: ${bad.join(', ')}`)
  return names.map((x) => x.replace(/^\[(.*)\]$/, '$1'))
}

/**
 * AGGREGATOR_ALLOW_HOSTS: a comma-separated list of host names (exact, lower-case) and addresses or
 * CIDRs the aggregator may reach although they are not public addresses.
 */
function parseAllowHosts(v: string): { hosts: string[]; cidrs: string[] } {
  const hosts: string[] = []
  const cidrs: string[] = []
  const bad: string[] = []
  for (const x of v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)) {
    const [addr = '', bits, extra] = x.split('/')
    const family = isIP(addr)
    if (family && extra === undefined && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))))
      cidrs.push(bits === undefined ? `${addr}/${family === 4 ? 32 : 128}` : x)
    else if (bits === undefined && /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(x)) hosts.push(x)
    else bad.push(x)
  }
  if (bad.length) throw new ConfigError(`invalid configuration:\n  AGGREGATOR_PG_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,57}$/, 'must be a lower-case SQL identifier').default('aggregator'),
  AGGREGATOR_ALLOW_HOSTS: not a host name, address or CIDR: ${bad.join(', ')}`)
  return { hosts, cidrs }
}

/** Reads and validates the environment once; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const blanksRemoved = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = Env.safeParse(blanksRemoved)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`)
  }
  const e = parsed.data
  const port = e.SERVER_PORT
  const authority = (e.PUBLIC_WIRE_HOST ?? `localhost:${port}`).toLowerCase()
  const scheme = e.PUBLIC_WIRE_HOST && !isLocalOrIp(authority) ? 'https' : 'http'
  const baseUrl = (e.PUBLIC_WIRE_URL ?? (e.PUBLIC_WIRE_HOST ? `${scheme}://${authority}` : `http://localhost:${port}`)).replace(/\/+$/, '')
  return Object.freeze({
    port,
    host: e.SERVER_HOST,
    logLevel: e.LOG_LEVEL,
    authority,
    baseUrl,
    agents: { allowedHosts: parseHostNames(e.AGENTS_ALLOWED_HOSTS) },
    aggregatorUrl: e.AGGREGATOR_URL?.replace(/\/+$/, ''),
    boardFile: e.WIRE_CONFIG,
    boardName: e.WIRE_BOARD_NAME,
    autoMigrate: e.WIRE_AUTO_MIGRATE,
    db: e.DATABASE_URL
      ? ({
          kind: 'postgres',
          url: e.DATABASE_URL,
          directUrl: e.DATABASE_URL_DIRECT ?? e.DATABASE_URL,
          replicaUrl: e.DATABASE_REPLICA_URL ?? e.DATABASE_URL,
          schema: e.WIRE_PG_SCHEMA,
        } as const)
      : ({ kind: 'embedded', dataDir: e.WIRE_DATA_DIR, schema: e.WIRE_PG_SCHEMA, sharedBuffersMb: e.WIRE_EMBEDDED_SHARED_BUFFERS_MB, mallocArenas: e.WIRE_EMBEDDED_MALLOC_ARENAS, wasmOptimize: e.WIRE_EMBEDDED_WASM_OPTIMIZE } as const),
    redisUrl: e.REDIS_URL,
    pgNotify: e.WIRE_PG_NOTIFY,
    identity: e.IDENTITY_URL
      ? ({ mode: 'network', url: e.IDENTITY_URL.replace(/\/+$/, ''), threadBitFloor: e.THREAD_BIT_FLOOR } as const)
      : ({ mode: 'local', verifiedByDefault: e.LOCAL_IDENTITY_VERIFIED } as const),
    signals: { defaultTtl: e.SIGNAL_DEFAULT_TTL_SECONDS, maxBatch: e.PUBLISH_MAX_BATCH },
    rateLimits: {
      publishMax: e.PUBLISH_RATE_LIMIT_MAX,
      publishWindowMs: e.PUBLISH_RATE_LIMIT_WINDOW_MS,
      unverifiedMax: e.UNVERIFIED_RATE_LIMIT_MAX,
      unverifiedWindowMs: 3_600_000,
      unverifiedThreadsPerDay: e.UNVERIFIED_THREADS_PER_DAY,
    },
    http: {
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: Math.min(e.HTTP_HEADERS_TIMEOUT_MS, e.HTTP_REQUEST_TIMEOUT_MS), // node requires headers ≤ request
      connectionTimeoutMs: e.HTTP_CONNECTION_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
      listenBacklog: e.HTTP_LISTEN_BACKLOG,
      shedEventLoopDelayMs: e.SHED_EVENT_LOOP_DELAY_MS,
      shedHeapUsedRatio: e.SHED_HEAP_USED_RATIO,
      trustProxy: parseTrustProxy(e.TRUST_PROXY),
      fastPath: e.HTTP_FAST_PATH,
      // named in the WWW-Authenticate challenge of every 401 (the reader serves the document)
      resourceMetadataUrl: `${baseUrl}/.well-known/oauth-protected-resource`,
    },
    clientLimits: {
      readMax: e.READ_RATE_LIMIT_MAX,
      readWindowMs: e.READ_RATE_LIMIT_WINDOW_MS,
      longPollsMax: e.LONG_POLLS_PER_ADDRESS_MAX,
      publishMax: e.PUBLISH_ADDRESS_RATE_LIMIT_MAX,
      publishWindowMs: e.PUBLISH_RATE_LIMIT_WINDOW_MS,
      attemptMax: e.PUBLISH_ATTEMPT_RATE_LIMIT_MAX,
      adminFailureMax: e.ADMIN_FAILURE_RATE_LIMIT_MAX,
      registerMax: e.REGISTER_RATE_LIMIT_MAX,
      newIdentityMax: e.IDENTITY_URL ? 0 : e.NEW_IDENTITY_RATE_LIMIT_MAX,
      ipv6PrefixBits: e.CLIENT_IPV6_PREFIX_BITS,
      // the connections a process may hold and 10,000 more (100,000 with no cap): ~0.2 KB each in use
      readLeasesMax: e.HTTP_MAX_CONNECTIONS > 0 ? e.HTTP_MAX_CONNECTIONS + 10_000 : 100_000,
    },
    sweep: { intervalSeconds: e.SIGNAL_SWEEP_INTERVAL_SECONDS, graceSeconds: e.SIGNAL_SWEEP_GRACE_SECONDS },
    reader: {
      fallbackPollMs: e.WAKE_FALLBACK_POLL_MS,
      tailSize: e.READER_TAIL_SIZE,
      tailMaxBytes: e.READER_TAIL_MAX_BYTES,
      chunkCacheMaxBytes: e.READER_CHUNK_CACHE_MAX_BYTES,
      maxWaiters: e.READER_MAX_WAITERS,
      semiSpaceMb: e.READER_SEMI_SPACE_MB,
      idleGcIntervalMs: e.IDLE_GC_INTERVAL_MS,
      idleGcRssBudgetMb: e.IDLE_GC_RSS_BUDGET_MB,
      maxDbReads: e.READ_DB_CONCURRENCY_MAX,
      statementTimeoutMs: e.READ_STATEMENT_TIMEOUT_MS,
    },
    tracing: tracingSettings(e),
    aggregator: {
      schema: e.AGGREGATOR_PG_SCHEMA,
      allowHosts: parseAllowHosts(e.AGGREGATOR_ALLOW_HOSTS),
      recheckSeconds: e.AGGREGATOR_RECHECK_SECONDS,
      downAfterSeconds: e.AGGREGATOR_DOWN_AFTER_SECONDS,
      dropAfterSeconds: Math.max(e.AGGREGATOR_DROP_AFTER_SECONDS, e.AGGREGATOR_DOWN_AFTER_SECONDS),
      fetchTimeoutMs: e.AGGREGATOR_FETCH_TIMEOUT_MS,
      discoveryMaxBytes: e.AGGREGATOR_DISCOVERY_MAX_BYTES,
      maxBoards: e.AGGREGATOR_MAX_BOARDS,
      registerMax: e.AGGREGATOR_REGISTER_RATE_LIMIT_MAX,
      connectionsPerBoard: e.AGGREGATOR_CONNECTIONS_PER_BOARD,
      sharedPolls: e.AGGREGATOR_SHARED_POLLS,
      answerMaxBytes: e.AGGREGATOR_ANSWER_MAX_BYTES,
      pageMaxBytes: e.AGGREGATOR_PAGE_MAX_BYTES,
      boardRowsMax: e.AGGREGATOR_BOARD_INDEX_ROWS_MAX,
      boardBytesMax: e.AGGREGATOR_BOARD_INDEX_BYTES_MAX,
      boardPagesPerMinute: e.AGGREGATOR_BOARD_PAGES_PER_MINUTE,
      pinHorizonSeconds: e.AGGREGATOR_PIN_HORIZON_SECONDS,
      proxyPerAddressMax: e.AGGREGATOR_PROXY_PER_ADDRESS_MAX,
      proxyPerBoardMax: e.AGGREGATOR_PROXY_PER_BOARD_MAX,
      proxyTimeoutMs: e.AGGREGATOR_PROXY_TIMEOUT_MS,
    },
    identityNetwork: {
      schema: e.IDENTITY_PG_SCHEMA,
      instantGrant: e.IDENTITY_INSTANT_GRANT_BITS,
      claimedGrant: e.IDENTITY_CLAIMED_GRANT_BITS,
      registerHourlyMax: e.IDENTITY_REGISTER_HOURLY_MAX,
      decayDays: e.IDENTITY_DECAY_DAYS,
      verifyMax: e.IDENTITY_VERIFY_RATE_LIMIT_MAX,
      callsMax: e.IDENTITY_CALLS_RATE_LIMIT_MAX,
    },
    // the only place secrets live; never logged
    secrets: { adminToken: e.SERVER_ADMIN_TOKEN, fingerprintSecret: e.FINGERPRINT_SECRET, identitySecret: e.IDENTITY_SECRET },
  })
}
export type Config = ReturnType<typeof loadConfig>

/** For a process's main: a bad environment prints one message naming every bad variable and exits 1. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`wire: ${err.message}\n`)
    process.exit(1)
  }
}

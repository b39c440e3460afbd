import { ConfigError } from './errors.js'
import { isLocalOrIp } from './public-host.js'
import { Env } from './settings/index.js'
import { tracingSettings } from './tracing.js'

export { ConfigError }
export { commaList } from './addresses.js'
export { loadBoardFile } from './board-file.js'
export { formatUnsetForPublicHost, unsetForPublicHost } from './public-host.js'
export type { TracingSettings } from './tracing.js'
export type { Setting } from './kinds.js'
export { cli as CLI_SETTINGS, schemaOf, SERVER_GROUPS, SETTING_NAMES } from './settings/index.js'

/** One line per bad setting, its name and what it expects (the first thing wrong with it). */
function problems(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const first = new Map<string, string>()
  for (const i of issues) if (!first.has(String(i.path[0]))) first.set(String(i.path[0]), i.message)
  return `invalid configuration:\n${[...first].map(([name, message]) => `  ${name}: ${message}`).join('\n')}`
}

/** Reads and validates the environment once; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const blanksRemoved = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = Env.safeParse(blanksRemoved)
  if (!parsed.success) throw new ConfigError(problems(parsed.error.issues))
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
    agents: { allowedHosts: e.AGENTS_ALLOWED_HOSTS },
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
      : ({
          kind: 'embedded',
          dataDir: e.WIRE_DATA_DIR,
          schema: e.WIRE_PG_SCHEMA,
          sharedBuffersMb: e.WIRE_EMBEDDED_SHARED_BUFFERS_MB,
          mallocArenas: e.WIRE_EMBEDDED_MALLOC_ARENAS,
          wasmOptimize: e.WIRE_EMBEDDED_WASM_OPTIMIZE,
        } as const),
    redisUrl: e.REDIS_URL,
    links: {
      db: {
        connectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
        keepAliveMs: e.DB_KEEPALIVE_MS,
        queryTimeoutMs: e.DB_QUERY_TIMEOUT_MS,
        idleInTransactionMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
      redis: {
        connectTimeoutMs: e.REDIS_CONNECT_TIMEOUT_MS,
        keepAliveMs: e.REDIS_KEEPALIVE_MS,
        commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
      },
    },
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
      trustProxy: e.TRUST_PROXY,
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
      allowHosts: e.AGGREGATOR_ALLOW_HOSTS,
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
      followMaxBytes: Math.max(e.AGGREGATOR_FOLLOW_MAX_BYTES, e.AGGREGATOR_PAGE_MAX_BYTES),
      pinHorizonSeconds: e.AGGREGATOR_PIN_HORIZON_SECONDS,
      followStalledSeconds: e.AGGREGATOR_FOLLOW_STALLED_SECONDS,
      proxyPerAddressMax: e.AGGREGATOR_PROXY_PER_ADDRESS_MAX,
      proxyPerBoardMax: e.AGGREGATOR_PROXY_PER_BOARD_MAX,
      proxyBoardBytesPerSecond: e.AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND,
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
    network: { boards: e.WIRE_NETWORK_BOARDS, aggregatorPort: e.WIRE_NETWORK_AGGREGATOR_PORT, identityPort: e.WIRE_NETWORK_IDENTITY_PORT },
    // the only place secrets live; never logged
    secrets: { adminToken: e.SERVER_ADMIN_TOKEN, fingerprintSecret: e.FINGERPRINT_SECRET, identitySecret: e.IDENTITY_SECRET },
  })
}
export type Config = ReturnType<typeof loadConfig>

/** For a process's main: a bad environment prints one message naming every bad variable and exits 1. */
export const loadConfigOrExit = (env: Record<string, string | undefined> = process.env): Config => orExit(() => loadConfig(env))

/** What `load()` returns; a ConfigError it throws is printed as one message, and the process exits 1. */
export function orExit<T>(load: () => T): T {
  try {
    return load()
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`wire: ${err.message}\n`)
    process.exit(1)
  }
}

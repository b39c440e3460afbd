import { z } from 'zod'
import { ConfigError } from './errors.js'

export { ConfigError }
export { loadBoardFile, type BoardFile } from './board-file.js'

const flag = (d: '0' | '1') => z.enum(['0', '1']).default(d).transform((v) => v === '1')
const int = (min: number, max: number, d: number) => z.coerce.number().int().min(min).max(max).default(d)
const optionalText = z.string().trim().min(1).optional()

/** Every setting Wire reads. Nothing else in the code base reads the environment. */
const Env = z.object({
  DATABASE_URL: optionalText, // unset: embedded PGlite in WIRE_DATA_DIR
  DATABASE_URL_DIRECT: optionalText,
  DATABASE_REPLICA_URL: optionalText, // ours: where readers read; default DATABASE_URL
  REDIS_URL: optionalText, // ours; unset: in-process wake bus (plus LISTEN/NOTIFY on PostgreSQL)
  WIRE_PG_NOTIFY: flag('1'), // ours: on PostgreSQL, wake-ups also travel by LISTEN/NOTIFY on the primary
  WIRE_PG_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier').default('public'),
  WIRE_AUTO_MIGRATE: flag('1'),
  WIRE_CONFIG: z.string().min(1).default('./subwire.config.json'),
  WIRE_DATA_DIR: z.string().min(1).default('./.wire'),
  SERVER_PORT: int(0, 65535, 4000),
  SERVER_HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_WIRE_HOST: z.string().trim().regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be host or host:port').optional(),
  PUBLIC_WIRE_URL: z.string().url().optional(),
  IDENTITY_URL: z.string().url().regex(/^https?:\/\//i, 'must be an http(s) URL').optional(), // set: network identity mode
  LOCAL_IDENTITY_VERIFIED: flag('1'),
  FINGERPRINT_SECRET: optionalText,
  SERVER_ADMIN_TOKEN: optionalText,
  SIGNAL_DEFAULT_TTL_SECONDS: int(10, 86400, 43200),
  THREAD_BIT_FLOOR: int(0, Number.MAX_SAFE_INTEGER, 1),
  PUBLISH_RATE_LIMIT_MAX: int(1, 1_000_000, 120),
  PUBLISH_RATE_LIMIT_WINDOW_MS: int(1000, 86_400_000, 60_000),
  UNVERIFIED_RATE_LIMIT_MAX: int(1, 1_000_000, 10),
  UNVERIFIED_THREADS_PER_DAY: int(0, 1_000_000, 1),
  SIGNAL_SWEEP_INTERVAL_SECONDS: int(1, 86400, 60),
  SIGNAL_SWEEP_GRACE_SECONDS: int(0, 30 * 86400, 86400),
  WAKE_FALLBACK_POLL_MS: int(50, 60_000, 1000),
  READER_TAIL_SIZE: int(0, 1_000_000, 5000), // ours: recent signals each reader keeps in memory (0: every read queries)
  PUBLISH_MAX_BATCH: int(1, 5000, 500), // ours: most signals one group commit may carry (1 = a commit per signal) // ours: readers re-check the head this often without a wake
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
})


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
  const baseUrl = (e.PUBLIC_WIRE_URL ?? (e.PUBLIC_WIRE_HOST ? `https://${authority}` : `http://localhost:${port}`)).replace(/\/+$/, '')
  return Object.freeze({
    port,
    host: e.SERVER_HOST,
    logLevel: e.LOG_LEVEL,
    authority,
    baseUrl,
    boardFile: e.WIRE_CONFIG,
    autoMigrate: e.WIRE_AUTO_MIGRATE,
    db: e.DATABASE_URL
      ? ({
          kind: 'postgres',
          url: e.DATABASE_URL,
          directUrl: e.DATABASE_URL_DIRECT ?? e.DATABASE_URL,
          replicaUrl: e.DATABASE_REPLICA_URL ?? e.DATABASE_URL,
          schema: e.WIRE_PG_SCHEMA,
        } as const)
      : ({ kind: 'embedded', dataDir: e.WIRE_DATA_DIR, schema: e.WIRE_PG_SCHEMA } as const),
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
    sweep: { intervalSeconds: e.SIGNAL_SWEEP_INTERVAL_SECONDS, graceSeconds: e.SIGNAL_SWEEP_GRACE_SECONDS },
    reader: { fallbackPollMs: e.WAKE_FALLBACK_POLL_MS, tailSize: e.READER_TAIL_SIZE },
    // the only place secrets live; never logged
    secrets: { adminToken: e.SERVER_ADMIN_TOKEN, fingerprintSecret: e.FINGERPRINT_SECRET },
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

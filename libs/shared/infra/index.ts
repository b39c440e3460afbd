import type { Redis } from 'ioredis'
import { fingerprintKey } from '../auth/index.js'
import { channels, localPresence, redisClient, redisPresence, wakeBus, type Presence, type WakeBus } from '../bus/index.js'
import type { Config } from '../config/index.js'
import { failoverDb, ident, migrate, pgliteDb, postgresDb, readBoardId, readStoredFingerprintKey, type Db, type Ident } from '../db/index.js'
import { clientLimits, type ClientLimits } from '../limits/index.js'
import type { Logger } from '../log/index.js'
import { startTracing } from '../tracing/index.js'

/** The connections a process holds. Each role's context takes what it needs from here. */
export interface Infra {
  primary: Db
  /** Where reads go: the replica for readers in the fleet (falling back to the primary while it is down), else the primary itself. */
  readDb: Db
  /** Reads that must see the primary (what a replica has not replayed yet): with the read pools' statement timeout when this process has them. */
  readPrimary: Db
  schema: Ident
  /** The board's random id (migrations/0005_board_id.sql): names wake-up channels and Redis keys. */
  boardId: string
  bus: WakeBus
  presence: Presence
  /** A Redis command connection (rate limits), when REDIS_URL is set. */
  redis: Redis | undefined
  fingerprintKey: string
  /** Per-client-address budgets (and local mode's new-identity budget), through Redis when there is one. */
  limits: ClientLimits
  close(): Promise<void>
}

export interface InfraOptions {
  /** Open a replica pool (readers). Writers and sweepers use the primary only. */
  replica?: boolean
  /** Run migrations on the primary (writers and the single process, unless WIRE_AUTO_MIGRATE=0). */
  migrate?: boolean
  /** False: wake-ups stay in this process (no Redis subscription, no LISTEN connection). For a role that neither publishes nor waits (the sweeper). */
  wakeUps?: boolean
}

export async function openInfra(cfg: Config, log: Logger, opts: InfraOptions = {}): Promise<Infra> {
  const opened: Array<() => Promise<void>> = []
  const close = async () => {
    for (const c of opened.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'error while closing'))
    opened.length = 0
  }
  try {
    // traces (OTEL_* settings): off by default; the SDK loads only when on. Named after the logger's role.
    opened.push(await startTracing(cfg.tracing, String(log.bindings().app ?? 'wire'), log))
    const schema = ident(cfg.db.schema)
    let primary: Db
    let readDb: Db
    let readPrimary: Db | undefined
    if (cfg.db.kind === 'embedded') {
      if (cfg.redisUrl) log.warn('REDIS_URL is ignored by the embedded database: run the fleet on PostgreSQL')
      primary = await pgliteDb(cfg.db.dataDir, { sharedBuffersMb: cfg.db.sharedBuffersMb })
      opened.push(() => primary.close())
      readDb = primary
      if (opts.migrate) await runMigrations(primary, cfg, log)
    } else {
      if (opts.migrate) await runMigrations(cfg.db.directUrl, cfg, log) // one session, never a pooler
      primary = postgresDb(cfg.db.url, { applicationName: 'wire', max: opts.replica ? 3 : 10 }) // writes (and the agents' publishes)
      opened.push(() => primary.close())
      // reads on pools of their own, each statement within READ_STATEMENT_TIMEOUT_MS (writes never are);
      // pg opens connections on demand, so a role that never reads here holds none
      const reads = { applicationName: 'wire-reader', statementTimeoutMs: cfg.reader.statementTimeoutMs }
      const standbyUrl = opts.replica && cfg.db.replicaUrl !== cfg.db.url ? cfg.db.replicaUrl : undefined
      const onPrimary = postgresDb(cfg.db.url, { ...reads, max: standbyUrl ? 3 : 10 })
      opened.push(() => onPrimary.close())
      readPrimary = onPrimary
      readDb = onPrimary
      if (standbyUrl) {
        const standby = postgresDb(standbyUrl, reads)
        opened.push(() => standby.close())
        // a down replica sends reads to the primary until it answers again
        readDb = failoverDb(standby, onPrimary, log.child({ mod: 'replica' }))
      }
    }
    const boardId = await readBoardId(primary, schema)
    const pg = cfg.db.kind === 'postgres'
    const redisUrl = pg ? cfg.redisUrl : undefined
    // in-process listeners first, then Redis and/or LISTEN/NOTIFY on the primary (docs/wake-ups.md)
    const network = opts.wakeUps !== false
    const bus = wakeBus({
      boardId,
      log: log.child({ mod: 'bus' }),
      redisUrl: network ? redisUrl : undefined,
      listenUrl: network && pg && cfg.pgNotify ? cfg.db.directUrl : undefined,
    })
    opened.push(() => bus.close())
    const redis = redisUrl ? redisClient(redisUrl, log.child({ mod: 'redis' })) : undefined
    if (redis) opened.push(async () => void redis.disconnect())
    const presence = redis ? redisPresence(redis, boardId, log) : localPresence()
    opened.push(() => presence.close())
    const key = fingerprintKey({
      secret: cfg.secrets.fingerprintSecret,
      stored: await readStoredFingerprintKey(primary, schema),
      ...(cfg.db.kind === 'postgres' ? { databaseUrl: cfg.db.url } : { dataDir: cfg.db.dataDir }),
    })
    const limits = clientLimits({ ...cfg.clientLimits, keyPrefix: `${channels(boardId).rateLimitPrefix}:client` }, redis)
    return { primary, readDb, readPrimary: readPrimary ?? primary, schema, boardId, bus, presence, redis, fingerprintKey: key, limits, close }
  } catch (err) {
    await close()
    throw err
  }
}

async function runMigrations(db: Db | string, cfg: Config, log: Logger) {
  const t0 = Date.now()
  const { applied } = await migrate(db, cfg.db.schema)
  log.info({ applied, schema: cfg.db.schema, ms: Date.now() - t0 }, 'migrations checked')
}

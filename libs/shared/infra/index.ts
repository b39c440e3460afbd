import type { Redis } from 'ioredis'
import { fingerprintKey } from '../auth/index.js'
import { channels, localPresence, redisClient, redisPresence, wakeBus, type Presence, type WakeBus } from '../bus/index.js'
import type { Config } from '../config/index.js'
import {
  failoverDb,
  ident,
  migrate,
  pgDeadlines,
  pgliteDb,
  postgresDb,
  readBoardId,
  readStoredFingerprintKey,
  type Db,
  type Ident,
} from '../db/index.js'
import { clientLimits, type ClientLimits } from '../limits/index.js'
import type { Logger } from '../log/index.js'
import { reportRedisHealth } from '../metrics/index.js'
import { projectPath } from '../paths.js'
import { startTracing } from '../tracing/index.js'
import { closeOnFailure, closeStack } from './close-stack.js'

export { closeOnFailure, closeStack } from './close-stack.js'

/** What every process holds: a pool on its schema, Redis when there is one, the per-address budgets. */
export interface Connections {
  /** Writes, and reads that must see them. */
  primary: Db
  schema: Ident
  /** A Redis command connection (rate limits), when REDIS_URL is set. */
  redis: Redis | undefined
  /** Per-client-address budgets (and local mode's new-identity budget), through Redis when there is one. */
  limits: ClientLimits
  close(): Promise<void>
}

/** A board's connections: the primary, where reads go, the wake-up bus and presence. */
export interface Infra extends Connections {
  /** Where reads go: the replica for readers in the fleet (falling back to the primary while it is down), else the primary itself. */
  readDb: Db
  /** Reads that must see the primary (what a replica has not replayed yet): with the read pools' statement timeout when this process has them. */
  readPrimary: Db
  /** The board's random id (migrations/0005_board_id.sql): names wake-up channels and Redis keys. */
  boardId: string
  bus: WakeBus
  presence: Presence
  fingerprintKey: string
}

export interface InfraOptions {
  /** Open a replica pool (readers). Writers and sweepers use the primary only. */
  replica?: boolean
  /** Run migrations on the primary (writers and the single process, unless WIRE_AUTO_MIGRATE=0). */
  migrate?: boolean
  /** False: wake-ups stay in this process (no Redis subscription, no LISTEN connection). For a role that neither publishes nor waits (the sweeper). */
  wakeUps?: boolean
}

/** A board's connections; what was opened is closed in reverse, also after a partial start. */
export async function openInfra(cfg: Config, log: Logger, opts: InfraOptions = {}): Promise<Infra> {
  const stack = closeStack(log)
  return closeOnFailure(stack.close, async () => {
    // traces (OTEL_* settings): off by default; the SDK loads only when on. Named after the logger's role.
    stack.defer(await startTracing(cfg.tracing, String(log.bindings().app ?? 'wire'), log))
    const schema = ident(cfg.db.schema)
    let primary: Db
    let readDb: Db
    let readPrimary: Db | undefined
    if (cfg.db.kind === 'embedded') {
      if (cfg.redisUrl) log.warn('REDIS_URL is ignored by the embedded database: run the fleet on PostgreSQL')
      const db = await pgliteDb(cfg.db.dataDir, { sharedBuffersMb: cfg.db.sharedBuffersMb })
      stack.defer(() => db.close())
      primary = readDb = db
      if (opts.migrate) await runMigrations(primary, cfg.db.schema, log)
    } else {
      if (opts.migrate) await runMigrations(cfg.db.directUrl, cfg.db.schema, log) // one session, never a pooler
      const links = cfg.links.db // every connection's deadlines and keepalive (docs/operations.md "The network drills")
      const writes = postgresDb(cfg.db.url, { ...links, applicationName: 'wire', max: opts.replica ? 3 : 10 }) // writes (and the agents' publishes)
      stack.defer(() => writes.close())
      primary = writes
      // reads on pools of their own, each statement within READ_STATEMENT_TIMEOUT_MS (writes never are);
      // pg opens connections on demand, so a role that never reads here holds none
      // a read's own deadline: the statement timeout and a second for its answer to come back, when sooner
      const readDeadline =
        cfg.reader.statementTimeoutMs && links.queryTimeoutMs
          ? Math.min(links.queryTimeoutMs, cfg.reader.statementTimeoutMs + 1000)
          : links.queryTimeoutMs
      const reads = {
        ...links,
        queryTimeoutMs: readDeadline,
        applicationName: 'wire-reader',
        statementTimeoutMs: cfg.reader.statementTimeoutMs,
      }
      const standbyUrl = opts.replica && cfg.db.replicaUrl !== cfg.db.url ? cfg.db.replicaUrl : undefined
      const onPrimary = postgresDb(cfg.db.url, { ...reads, max: standbyUrl ? 3 : 10 })
      stack.defer(() => onPrimary.close())
      readPrimary = readDb = onPrimary
      if (standbyUrl) {
        const standby = postgresDb(standbyUrl, reads)
        stack.defer(() => standby.close())
        // a down replica sends reads to the primary until it answers again
        const failover = failoverDb(standby, onPrimary, log.child({ mod: 'replica' }))
        stack.defer(() => failover.close())
        readDb = failover
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
      redisLink: cfg.links.redis,
      listenUrl: network && pg && cfg.pgNotify ? cfg.db.directUrl : undefined,
      listenDeadlines: pgDeadlines(cfg.links.db),
    })
    stack.defer(() => bus.close())
    const redis = openRedis(redisUrl, cfg, log, stack.defer)
    const presence = redis ? redisPresence(redis, boardId, log) : localPresence()
    stack.defer(() => presence.close())
    const key = fingerprintKey({
      secret: cfg.secrets.fingerprintSecret,
      stored: await readStoredFingerprintKey(primary, schema),
      ...(cfg.db.kind === 'postgres' ? { databaseUrl: cfg.db.url } : { dataDir: cfg.db.dataDir }),
    })
    const limits = clientLimits({ ...cfg.clientLimits, keyPrefix: `${channels(boardId).rateLimitPrefix}:client` }, redis)
    return {
      primary,
      readDb,
      readPrimary: readPrimary ?? primary,
      schema,
      boardId,
      bus,
      presence,
      redis,
      fingerprintKey: key,
      limits,
      close: stack.close,
    }
  })
}

/** A service's schema, the folder of its own migrations applied to it, and its pool's application_name. */
export interface ServiceDb {
  schema: string
  migrations: string
  applicationName: string
}

/**
 * A service's connections (the aggregator's, the identity network's): its schema migrated unless
 * WIRE_AUTO_MIGRATE=0, on PostgreSQL or on the embedded database in WIRE_DATA_DIR (one process;
 * shared with the boards a network in one process runs beside it); Redis on PostgreSQL; budgets.
 */
export async function openServiceConnections(cfg: Config, log: Logger, o: ServiceDb): Promise<Connections> {
  const stack = closeStack(log)
  return closeOnFailure(stack.close, async () => {
    stack.defer(await startTracing(cfg.tracing, String(log.bindings().app ?? 'wire'), log))
    let primary: Db
    if (cfg.db.kind === 'embedded') {
      const db = await pgliteDb(cfg.db.dataDir, { sharedBuffersMb: cfg.db.sharedBuffersMb })
      stack.defer(() => db.close())
      if (cfg.autoMigrate) await runMigrations(db, o.schema, log, o.migrations)
      primary = db
    } else {
      if (cfg.autoMigrate) await runMigrations(cfg.db.directUrl, o.schema, log, o.migrations) // one session, never a pooler
      const db = postgresDb(cfg.db.url, { ...cfg.links.db, applicationName: o.applicationName, max: 10 })
      stack.defer(() => db.close())
      primary = db
    }
    const redis = openRedis(cfg.db.kind === 'postgres' ? cfg.redisUrl : undefined, cfg, log, stack.defer)
    const limits = clientLimits({ ...cfg.clientLimits, keyPrefix: `wire:${o.schema}:client` }, redis)
    return { primary, schema: ident(o.schema), redis, limits, close: stack.close }
  })
}

/** The process's Redis command connection (budgets, presence); wire_redis_up reports it beside the bus. */
function openRedis(url: string | undefined, cfg: Config, log: Logger, defer: (c: () => unknown) => void): Redis | undefined {
  if (!url) return undefined
  const redis = redisClient(url, log.child({ mod: 'redis' }), cfg.links.redis)
  defer(reportRedisHealth(() => redis.status === 'ready'))
  defer(() => redis.disconnect())
  return redis
}

async function runMigrations(db: Db | string, schema: string, log: Logger, dir?: string) {
  const t0 = Date.now()
  const { applied } = await migrate(db, schema, dir ? { dir: projectPath(dir) } : {})
  log.info({ applied, schema, ms: Date.now() - t0 }, 'migrations checked')
}

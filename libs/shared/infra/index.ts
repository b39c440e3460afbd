import type { Redis } from 'ioredis'
import { fingerprintKey } from '../auth/index.js'
import { channels, localBus, localPresence, redisBus, redisClient, redisPresence, type Presence, type WakeBus } from '../bus/index.js'
import type { Config } from '../config/index.js'
import { failoverDb, ident, migrate, pgliteDb, postgresDb, type Db, type Ident } from '../db/index.js'
import { clientLimits, type ClientLimits } from '../limits/index.js'
import type { Logger } from '../log/index.js'

/** The connections a process holds. Each role's context takes what it needs from here. */
export interface Infra {
  primary: Db
  /** Where reads go: the replica in the fleet, the primary itself otherwise. */
  replica: Db
  schema: Ident
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
}

export async function openInfra(cfg: Config, log: Logger, opts: InfraOptions = {}): Promise<Infra> {
  const opened: Array<() => Promise<void>> = []
  const close = async () => {
    for (const c of opened.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'error while closing'))
    opened.length = 0
  }
  try {
    const schema = ident(cfg.db.schema)
    let primary: Db
    let replica: Db
    if (cfg.db.kind === 'embedded') {
      if (cfg.redisUrl) log.warn('REDIS_URL is ignored by the embedded database: run the fleet on PostgreSQL')
      primary = await pgliteDb(cfg.db.dataDir)
      opened.push(() => primary.close())
      replica = primary
      if (opts.migrate) await runMigrations(primary, cfg, log)
    } else {
      if (opts.migrate) {
        const direct = postgresDb(cfg.db.directUrl, { max: 1, applicationName: 'wire-migrate' })
        try {
          await runMigrations(direct, cfg, log)
        } finally {
          await direct.close()
        }
      }
      primary = postgresDb(cfg.db.url, { applicationName: 'wire', max: opts.replica ? 3 : 10 }) // a reader only falls back to it
      opened.push(() => primary.close())
      replica = primary
      if (opts.replica && cfg.db.replicaUrl !== cfg.db.url) {
        const standby = postgresDb(cfg.db.replicaUrl, { applicationName: 'wire-reader' })
        opened.push(() => standby.close())
        // a down replica sends reads to the primary until it answers again
        replica = failoverDb(standby, primary, log.child({ mod: 'replica' }))
      }
    }
    const useRedis = cfg.redisUrl !== undefined && cfg.db.kind === 'postgres'
    const bus = useRedis ? redisBus(cfg.redisUrl!, cfg.db.schema, log.child({ mod: 'bus' })) : localBus()
    opened.push(() => bus.close())
    const redis = useRedis ? redisClient(cfg.redisUrl!, log.child({ mod: 'redis' })) : undefined
    if (redis) opened.push(async () => void redis.disconnect())
    const presence = redis ? redisPresence(redis, cfg.db.schema, log) : localPresence()
    opened.push(() => presence.close())
    const key = fingerprintKey({
      secret: cfg.secrets.fingerprintSecret,
      ...(cfg.db.kind === 'postgres' ? { databaseUrl: cfg.db.url } : { dataDir: cfg.db.dataDir }),
    })
    const limits = clientLimits({ ...cfg.clientLimits, keyPrefix: `${channels(cfg.db.schema).rateLimitPrefix}:client` }, redis)
    return { primary, replica, schema, bus, presence, redis, fingerprintKey: key, limits, close }
  } catch (err) {
    await close()
    throw err
  }
}

async function runMigrations(db: Db, cfg: Config, log: Logger) {
  const t0 = Date.now()
  const { applied } = await migrate(db, cfg.db.schema)
  log.info({ applied, schema: cfg.db.schema, ms: Date.now() - t0 }, 'migrations checked')
}

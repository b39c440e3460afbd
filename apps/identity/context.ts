import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { redisClient } from '../../libs/shared/bus/index.js'
import { systemClock, type Clock } from '../../libs/shared/clock.js'
import type { Config } from '../../libs/shared/config/index.js'
import { ident, migrate, pgliteDb, postgresDb, type Db, type Ident } from '../../libs/shared/db/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { accountStore, type AccountStore } from './accounts.js'
import { identityBudgets, type IdentityBudgets } from './budgets.js'
import { ledger, type Ledger } from './ledger.js'
import { identityStore, type IdentityStore } from './store.js'
import { tokenKeys, type TokenKeys } from './tokens.js'

/** Where the identity network's migrations live: a folder of their own, applied to IDENTITY_PG_SCHEMA. */
export const IDENTITY_MIGRATIONS = 'migrations/identity'

export interface IdentityContext {
  readonly cfg: Config
  readonly log: Logger
  readonly db: Db
  readonly schema: Ident
  readonly redis: Redis | undefined
  readonly clock: Clock
  readonly keys: TokenKeys
  readonly identities: IdentityStore
  readonly accounts: AccountStore
  readonly ledger: Ledger
  readonly budgets: IdentityBudgets
  close(): Promise<void>
}

export interface IdentityOptions {
  /** What grants, transfers, derived tokens' expiry and decay read the time from (tests drive their own). */
  clock?: Clock
}

/**
 * The server key: IDENTITY_SECRET when set; else the one the schema keeps, made by the first
 * process that starts (every other process of the network reads the same one). Like the board's
 * fingerprint key, it is never served and never logged; losing it invalidates every token.
 */
async function serverKey(db: Db, s: Ident, secret: string | undefined): Promise<string> {
  if (secret) return secret
  await db.query(`insert into ${s}.server_key (key) values ($1) on conflict (only_row) do nothing`, [randomBytes(32).toString('hex')])
  const r = await db.query<{ key: string }>(`select key from ${s}.server_key`)
  return r.rows[0]!.key
}

/** The identity network's connections and parts; what was opened is closed in reverse, also after a partial start. */
export async function createIdentityContext(cfg: Config, log: Logger, o: IdentityOptions = {}): Promise<IdentityContext> {
  const n = cfg.identityNetwork
  const opened: Array<() => Promise<void>> = []
  const close = async () => {
    for (const c of opened.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'error while closing'))
    opened.length = 0
  }
  try {
    let db: Db
    if (cfg.db.kind === 'embedded') {
      // a trial on one machine: the embedded database in WIRE_DATA_DIR (not beside a board's: one process per data directory)
      db = await pgliteDb(cfg.db.dataDir, { sharedBuffersMb: cfg.db.sharedBuffersMb })
      opened.push(() => db.close())
      if (cfg.autoMigrate) await migrate(db, n.schema, { dir: projectPath(IDENTITY_MIGRATIONS) })
    } else {
      if (cfg.autoMigrate) {
        const { applied } = await migrate(cfg.db.directUrl, n.schema, { dir: projectPath(IDENTITY_MIGRATIONS) })
        log.info({ applied, schema: n.schema }, 'identity migrations checked')
      }
      db = postgresDb(cfg.db.url, { applicationName: 'wire-identity', max: 10 })
      opened.push(() => db.close())
    }
    const schema = ident(n.schema)
    const redisUrl = cfg.db.kind === 'postgres' ? cfg.redisUrl : undefined
    const redis = redisUrl ? redisClient(redisUrl, log.child({ mod: 'redis' })) : undefined
    if (redis) opened.push(async () => void redis.disconnect())
    const keys = tokenKeys(await serverKey(db, schema, cfg.secrets.identitySecret))
    const budgets = identityBudgets(cfg, `wire:${n.schema}`, redis)
    return {
      cfg,
      log,
      db,
      schema,
      redis,
      clock: o.clock ?? systemClock,
      keys,
      identities: identityStore(db, schema),
      accounts: accountStore(db, schema),
      ledger: ledger(db, schema),
      budgets,
      close,
    }
  } catch (err) {
    await close()
    throw err
  }
}

import { randomBytes } from 'node:crypto'
import { systemClock, type Clock } from '../../libs/shared/clock.js'
import type { Config } from '../../libs/shared/config/index.js'
import { closeOnFailure, createIdentityRoot } from '../../libs/shared/context/index.js'
import type { Db, Ident } from '../../libs/shared/db/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { accountStore, type AccountStore } from './accounts.js'
import { identityBudgets, type IdentityBudgets } from './budgets.js'
import { ledger, type Ledger } from './ledger.js'
import { identityStore, type IdentityStore } from './store.js'
import { tokenKeys, type TokenKeys } from './tokens.js'

export interface IdentityContext {
  readonly cfg: Config
  readonly log: Logger
  readonly db: Db
  readonly schema: Ident
  readonly clock: Clock
  readonly keys: TokenKeys
  readonly identities: IdentityStore
  readonly accounts: AccountStore
  readonly ledger: Ledger
  readonly budgets: IdentityBudgets
  defer(close: () => unknown): void
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

/** The identity network's parts on its root (libs/shared/context): connections, tracing and budgets from there, all closed in reverse. */
export async function createIdentityContext(cfg: Config, log: Logger, o: IdentityOptions = {}): Promise<IdentityContext> {
  const root = await createIdentityRoot(cfg, log)
  return closeOnFailure(root.close, async () => {
    const { primary: db, schema, redis, limits } = root.connections
    const keys = tokenKeys(await serverKey(db, schema, cfg.secrets.identitySecret))
    return {
      cfg,
      log,
      db,
      schema,
      clock: o.clock ?? systemClock,
      keys,
      identities: identityStore(db, schema),
      accounts: accountStore(db, schema),
      ledger: ledger(db, schema),
      budgets: identityBudgets(cfg, limits, `wire:${cfg.identityNetwork.schema}`, redis),
      defer: root.defer,
      close: root.close,
    }
  })
}

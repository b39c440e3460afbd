import type { IdentityResolver } from '../auth/index.js'
import type { Presence } from '../bus/index.js'
import type { Config } from '../config/index.js'
import { boardReader, signalReader, type BoardReader, type Queryable, type SignalReader } from '../db/index.js'
import type { Infra } from '../infra/index.js'
import type { Logger } from '../log/index.js'
import { Feed } from './feed.js'
import { readDoor, type ReadDoor } from './read-door.js'
import { singleFlight } from './single-flight.js'

/**
 * Everything a read needs: the door every read goes through (`read`, `byId`, `thread`, which spend
 * the caller's budgets), the feed (tail + long-poll waiters) behind it, board metadata and
 * presence. Readers and the agents app each hold one on the replica; the single process holds one
 * and shares it.
 */
export interface ReadSide extends ReadDoor {
  /** This board's sw:// authority. */
  readonly authority: string
  readonly feed: Feed
  readonly signals: SignalReader
  readonly board: BoardReader
  readonly presence: Presence
  /** Answers every waiting long-poll now (shutdown). Connections belong to Infra. */
  close(): Promise<void>
}

export interface ReadSideOptions {
  tailSize?: number
  fallbackPollMs?: number
  /** Names pollers for recentPollers (the process's identity resolver; never waits on the network). */
  identity: Pick<IdentityResolver, 'peek'>
}

/** A read side on `infra.readDb`; on a replica, what it has not replayed yet is asked of the primary. */
export async function createReadSide(cfg: Config, log: Logger, infra: Infra, opts: ReadSideOptions): Promise<ReadSide> {
  const db: Queryable = infra.readDb
  const grace = { graceSeconds: cfg.sweep.graceSeconds }
  const sql = signalReader(db, infra.schema, grace)
  const boardSql = boardReader(db, infra.schema)
  // @NOTE the aggregates over every active signal (GET /sw/tags, the counts of /sw/wire and /sw/stats)
  // run once at a time per process and key, however many requests ask at once
  const signals: SignalReader = { ...sql, tags: singleFlight(sql.tags, (prefix, limit) => `${limit}\u0000${prefix ?? ''}`) }
  const board: BoardReader = { ...boardSql, activeStats: singleFlight(boardSql.activeStats) }
  const feed = new Feed(sql, infra.bus, log.child({ mod: 'feed' }), {
    authority: cfg.authority,
    tailSize: opts.tailSize ?? cfg.reader.tailSize,
    graceMs: cfg.sweep.graceSeconds * 1000,
    fallbackPollMs: opts.fallbackPollMs ?? cfg.reader.fallbackPollMs,
    maxWaiters: cfg.reader.maxWaiters,
    ...(db !== infra.readPrimary && { primary: signalReader(infra.readPrimary, infra.schema, grace) }),
  })
  await feed.start()
  const door = readDoor({ authority: cfg.authority, feed, signals, presence: infra.presence, limits: infra.limits, identity: opts.identity })
  return {
    ...door,
    authority: cfg.authority,
    feed,
    signals,
    board,
    presence: infra.presence,
    async close() {
      feed.close()
    },
  }
}

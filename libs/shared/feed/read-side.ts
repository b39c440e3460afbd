import type { IdentityResolver } from '../auth/index.js'
import type { Presence } from '../bus/index.js'
import type { Config } from '../config/index.js'
import { boardReader, signalReader, type BoardReader, type Queryable, type SignalReader } from '../db/index.js'
import type { Infra } from '../infra/index.js'
import type { Logger } from '../log/index.js'
import { Feed } from './feed.js'
import { readDoor, type ReadDoor } from './read-door.js'
import { sharedAnswer, singleFlight } from './single-flight.js'

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

/** Tags GET /sw/tags chooses from: the most used active ones (type-ahead needs no more). */
const TAGS_KEPT = 10_000
/** How long an aggregate over every active signal answers while the feed has not changed. */
const SHARED_AGGREGATE_MS = 1000

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
  // @NOTE the counts of /sw/wire and /sw/stats run once at a time per process, however many requests ask at once
  const board: BoardReader = { ...boardSql, activeStats: singleFlight(boardSql.activeStats) }
  const feed = new Feed(sql, infra.bus, log.child({ mod: 'feed' }), {
    authority: cfg.authority,
    tailSize: opts.tailSize ?? cfg.reader.tailSize,
    tailMaxBytes: cfg.reader.tailMaxBytes,
    chunkCacheMaxBytes: cfg.reader.chunkCacheMaxBytes,
    graceMs: cfg.sweep.graceSeconds * 1000,
    fallbackPollMs: opts.fallbackPollMs ?? cfg.reader.fallbackPollMs,
    maxWaiters: cfg.reader.maxWaiters,
    maxDbReads: cfg.reader.maxDbReads,
    ...(db !== infra.readPrimary && { primary: signalReader(infra.readPrimary, infra.schema, grace) }),
  })
  // GET /sw/tags: one aggregate of the TAGS_KEPT most used active tags serves every prefix and limit
  // (a random prefix per request would otherwise scan every active signal each time)
  const allTags = sharedAnswer(
    () => sql.tags(null, TAGS_KEPT),
    () => feed.version,
    SHARED_AGGREGATE_MS,
  )
  const signals: SignalReader = {
    ...sql,
    tags: async (prefix, limit) => (await allTags()).filter((t) => prefix === null || t.tag.startsWith(prefix)).slice(0, limit),
  }
  await feed.start()
  const door = readDoor({
    authority: cfg.authority,
    feed,
    signals,
    presence: infra.presence,
    limits: infra.limits,
    identity: opts.identity,
  })
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

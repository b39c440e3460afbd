import { STATS_MAX_BUCKETS, statsReader, type StatsReader } from '../../libs/shared/db/index.js'
import type { AppContext } from '../../libs/shared/context/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { singleFlight, type ReadSide } from '../../libs/shared/feed/index.js'

/** What the reader's routes need: a view of the root. Everything here reads; nothing writes (CQRS: readers hold the replica). */
export interface ReaderContext {
  readonly cfg: Config
  readonly log: Logger
  /** The door every read goes through (budgets, presence), with the feed, signals, board and presence behind it. */
  readonly readSide: ReadSide
  /** GET /sw/stats: the sweeper's rollup plus what it has not reached yet. */
  readonly stats: StatsReader
  ready(): Promise<{ ok: boolean; head?: number; waiting?: number }>
  /** Stops serving: readiness turns false and every waiting long-poll is answered now. */
  close(): Promise<void>
}

/**
 * GET /sw/stats' buckets, any `count`, sliced from one read of the most buckets per bucket size:
 * requests for any count of one size share the read in flight (at most 60 sizes, so at most 60 at
 * once), and every answer stays exact (a publish counts at once).
 */
function sharedStats(stats: StatsReader): StatsReader {
  const widest = singleFlight(
    (bucketSeconds: number) => stats.activity(bucketSeconds, STATS_MAX_BUCKETS, Date.now()),
    (bucketSeconds) => String(bucketSeconds),
  )
  return { ...stats, activity: async (bucketSeconds, count) => (await widest(bucketSeconds)).slice(-count) }
}

export function readerContext(root: AppContext): ReaderContext {
  const readSide = root.readSide
  if (!readSide) throw new Error('the reader needs a root with the reader role')
  const { infra } = root
  let stopping = false
  return {
    cfg: root.cfg,
    log: root.log,
    readSide,
    stats: sharedStats(statsReader(infra.readDb, infra.schema)),
    async ready() {
      if (stopping) return { ok: false }
      await infra.readDb.query('select 1')
      return { ok: true, head: readSide.feed.head, waiting: readSide.feed.waiting }
    },
    async close() {
      stopping = true
      await readSide.close()
    },
  }
}

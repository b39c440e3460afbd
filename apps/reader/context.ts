import { localIdentity, networkIdentity, type IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Presence } from '../../libs/shared/bus/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { STATS_MAX_BUCKETS, statsReader, type BoardReader, type SignalReader, type StatsReader } from '../../libs/shared/db/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createReadSide, singleFlight, type Feed, type ReadSide } from '../../libs/shared/feed/index.js'

/** What the reader's routes need. Everything here reads; nothing writes (CQRS: readers hold the replica). */
export interface ReaderContext {
  readonly cfg: Config
  readonly log: Logger
  readonly feed: Feed
  readonly signals: SignalReader
  readonly board: BoardReader
  readonly presence: Presence
  /** GET /sw/stats: the sweeper's rollup plus what it has not reached yet. */
  readonly stats: StatsReader
  /** Names pollers for recentPollers from their bearer token (the read side's door asks it); never waits on the identity network. */
  readonly identity: Pick<IdentityResolver, 'peek'>
  /** The door every read goes through (budgets, presence), and the feed, signals, board and presence above as one piece. */
  readonly readSide: ReadSide
  ready(): Promise<{ ok: boolean; head?: number; waiting?: number }>
  close(): Promise<void>
}

export interface ReaderOptions {
  tailSize?: number
  fallbackPollMs?: number
  /** Network mode: the single process shares the writer's resolver, so reads see its verify cache. */
  identity?: Pick<IdentityResolver, 'peek'>
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

export async function createReaderContext(cfg: Config, log: Logger, infra: Infra, opts: ReaderOptions = {}): Promise<ReaderContext> {
  // local mode: the fingerprint needs no network; network mode peeks at its verify cache and, for a
  // token it has not seen, verifies in the background while this read goes on (docs/identity.md)
  const identity =
    opts.identity ??
    (cfg.identity.mode === 'network'
      ? networkIdentity({ url: cfg.identity.url, authority: cfg.authority, log })
      : localIdentity({
          authority: cfg.authority,
          fingerprintKey: infra.fingerprintKey,
          verifiedByDefault: true,
          isAllowListed: async () => false,
        }))
  const readSide = await createReadSide(cfg, log, infra, { ...opts, identity })
  const { feed, signals, board } = readSide
  let stopping = false
  return {
    cfg,
    log,
    feed,
    signals,
    board,
    presence: infra.presence,
    stats: sharedStats(statsReader(infra.readDb, infra.schema)),
    readSide,
    identity,
    async ready() {
      if (stopping) return { ok: false }
      await infra.readDb.query('select 1')
      return { ok: true, head: feed.head, waiting: feed.waiting }
    },
    async close() {
      stopping = true
      await readSide.close()
    },
  }
}

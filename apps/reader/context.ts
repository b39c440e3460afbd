import { localIdentity, networkIdentity, type IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Presence } from '../../libs/shared/bus/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { statsReader, type BoardReader, type SignalReader, type StatsReader } from '../../libs/shared/db/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createReadSide, type Feed, type ReadSide } from '../../libs/shared/feed/index.js'

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
  /** The feed, signals, board and presence above as one piece (the single process's agent surfaces read through it). */
  readonly readSide: ReadSide
  /** Names the poller for recentPollers from its bearer token; never waits on (or fails with) the identity network. */
  readonly identity: Pick<IdentityResolver, 'peek'>
  /** Per-client-address read and long-poll budgets (installReadLimits). */
  readonly limits: ClientLimits
  ready(): Promise<{ ok: boolean; head?: number; waiting?: number }>
  close(): Promise<void>
}

export interface ReaderOptions {
  tailSize?: number
  fallbackPollMs?: number
  /** Network mode: the single process shares the writer's resolver, so reads see its verify cache. */
  identity?: Pick<IdentityResolver, 'peek'>
}

export async function createReaderContext(cfg: Config, log: Logger, infra: Infra, opts: ReaderOptions = {}): Promise<ReaderContext> {
  const readSide = await createReadSide(cfg, log, infra, opts)
  const { feed, signals, board } = readSide
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
  let stopping = false
  return {
    cfg,
    log,
    feed,
    signals,
    board,
    presence: infra.presence,
    stats: statsReader(infra.readDb, infra.schema),
    readSide,
    identity,
    limits: infra.limits,
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

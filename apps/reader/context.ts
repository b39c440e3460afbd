import { localIdentity, type IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Presence } from '../../libs/shared/bus/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { boardReader, signalReader, type BoardReader, type SignalReader } from '../../libs/shared/db/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { Feed } from '../../libs/shared/feed/index.js'

/** What the reader's routes need. Everything here reads; nothing writes (CQRS: readers hold the replica). */
export interface ReaderContext {
  readonly cfg: Config
  readonly log: Logger
  readonly feed: Feed
  readonly signals: SignalReader
  readonly board: BoardReader
  readonly presence: Presence
  /** Names the poller for recentPollers: the identity of a valid bearer token, never a network call. */
  readonly identity: Pick<IdentityResolver, 'peek'>
  ready(): Promise<{ ok: boolean; head?: number; waiting?: number }>
  close(): Promise<void>
}

export interface ReaderOptions {
  tailSize?: number
  fallbackPollMs?: number
}

export async function createReaderContext(cfg: Config, log: Logger, infra: Infra, opts: ReaderOptions = {}): Promise<ReaderContext> {
  const signals = signalReader(infra.replica, infra.schema)
  const board = boardReader(infra.replica, infra.schema)
  const feed = new Feed(signals, infra.bus, log.child({ mod: 'feed' }), {
    authority: cfg.authority,
    tailSize: opts.tailSize ?? 5000,
    fallbackPollMs: opts.fallbackPollMs ?? cfg.reader.fallbackPollMs,
  })
  await feed.start()
  // local mode: the fingerprint needs no network; network mode (issue #5) peeks at its verify cache only
  const identity = localIdentity({
    authority: cfg.authority,
    fingerprintKey: infra.fingerprintKey,
    verifiedByDefault: true,
    isAllowListed: async () => false,
  })
  let stopping = false
  return {
    cfg,
    log,
    feed,
    signals,
    board,
    presence: infra.presence,
    identity,
    async ready() {
      if (stopping) return { ok: false }
      await infra.replica.query('select 1')
      return { ok: true, head: feed.head, waiting: feed.waiting }
    },
    async close() {
      stopping = true
      feed.releaseAll()
    },
  }
}

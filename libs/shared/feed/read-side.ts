import type { Presence } from '../bus/index.js'
import type { Config } from '../config/index.js'
import { boardReader, signalReader, type BoardReader, type Queryable, type SignalReader } from '../db/index.js'
import type { Infra } from '../infra/index.js'
import type { Logger } from '../log/index.js'
import { Feed } from './feed.js'

/**
 * Everything a read needs: the feed (tail + long-poll waiters), SQL reads for by-id and thread,
 * board metadata and presence. The reader holds one on its replica; the writer's agent surfaces
 * (MCP, A2A) hold one on the primary, or share the reader's in the single process.
 */
export interface ReadSide {
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
}

export async function createReadSide(cfg: Config, log: Logger, infra: Infra, db: Queryable, opts: ReadSideOptions = {}): Promise<ReadSide> {
  const signals = signalReader(db, infra.schema, { graceSeconds: cfg.sweep.graceSeconds })
  const board = boardReader(db, infra.schema)
  const feed = new Feed(signals, infra.bus, log.child({ mod: 'feed' }), {
    authority: cfg.authority,
    tailSize: opts.tailSize ?? cfg.reader.tailSize,
    graceMs: cfg.sweep.graceSeconds * 1000,
    fallbackPollMs: opts.fallbackPollMs ?? cfg.reader.fallbackPollMs,
    // on a replica, a request it is still behind on is answered by the primary
    ...(db !== infra.primary && { primary: signalReader(infra.primary, infra.schema, { graceSeconds: cfg.sweep.graceSeconds }) }),
  })
  await feed.start()
  return {
    authority: cfg.authority,
    feed,
    signals,
    board,
    presence: infra.presence,
    async close() {
      feed.releaseAll()
    },
  }
}

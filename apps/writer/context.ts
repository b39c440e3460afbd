import { adminGuard, type AdminCheck, type IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Invalidation, WakeBus } from '../../libs/shared/bus/index.js'
import { loadBoardFile, type Config } from '../../libs/shared/config/index.js'
import { boardReader, boardWriter, signalWriter, type BoardReader, type BoardWriter, type SignalWriter } from '../../libs/shared/db/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createPublisher, type BoardPolicy, type Publisher, type PublisherOptions } from '../../libs/shared/publish/index.js'
import { watchDurability, type DurabilityWatch } from './durability.js'

/** What the writer's routes need. Everything here talks to the primary. */
export interface WriterContext {
  readonly cfg: Config
  readonly log: Logger
  readonly publisher: Publisher
  readonly signals: SignalWriter
  readonly board: BoardReader
  readonly boardWrite: BoardWriter
  readonly policy: BoardPolicy
  readonly bus: WakeBus
  readonly identity: IdentityResolver
  /** The admin API's door: token, and the address's budget of failed attempts. */
  readonly checkAdmin: AdminCheck
  /** Whether a synchronous standby confirms commits (read at start, then periodically). */
  readonly durability: DurabilityWatch
  /** After an admin change: this process's own read side first (awaited), then every other process over the bus. */
  invalidate(m: Invalidation): Promise<void>
  ready(): Promise<{ ok: boolean; durability?: DurabilityWatch['current'] }>
  /** Lets in-flight publishes commit. Connections belong to Infra and are closed by main. */
  close(): Promise<void>
}

export type WriterOptions = PublisherOptions

export async function createWriterContext(cfg: Config, log: Logger, infra: Infra, opts: WriterOptions = {}): Promise<WriterContext> {
  const { primary, schema, bus } = infra
  const boardWrite = boardWriter(primary, schema)
  const seed = loadBoardFile(cfg.boardFile)
  if (seed) await boardWrite.seed(seed)
  const publisher = createPublisher(cfg, log, infra, opts)
  const durability = await watchDurability(primary, log.child({ mod: 'durability' }))
  let stopping = false
  return {
    cfg,
    log,
    publisher,
    signals: signalWriter(primary, schema),
    board: boardReader(primary, schema),
    boardWrite,
    policy: publisher.policy,
    bus,
    identity: publisher.identity,
    checkAdmin: adminGuard(cfg.secrets.adminToken, infra.limits),
    durability,
    async invalidate(m) {
      if (m.kind !== 'signal') publisher.policy.invalidate()
      await bus.publishInvalidation(m) // resolves once this process's own read side has applied it
    },
    async ready() {
      if (stopping) return { ok: false, durability: durability.current }
      await primary.query('select 1')
      return { ok: true, durability: durability.current }
    },
    async close() {
      stopping = true
      durability.stop()
      await publisher.flush()
    },
  }
}

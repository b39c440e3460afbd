import { adminGuard, type AdminCheck } from '../../libs/shared/auth/index.js'
import type { Invalidation } from '../../libs/shared/bus/index.js'
import { loadBoardFile, type Config } from '../../libs/shared/config/index.js'
import type { AppContext } from '../../libs/shared/context/index.js'
import {
  boardReader,
  boardWriter,
  signalWriter,
  type BoardReader,
  type BoardWriter,
  type SignalWriter,
} from '../../libs/shared/db/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import type { Publisher } from '../../libs/shared/publish/index.js'
import { watchDurability, type DurabilityWatch } from './durability.js'

/** What the writer's routes need: a view of the root. Everything here talks to the primary. */
export interface WriterContext {
  readonly cfg: Config
  readonly log: Logger
  readonly publisher: Publisher
  readonly signals: SignalWriter
  readonly board: BoardReader
  readonly boardWrite: BoardWriter
  /** The admin API's door: token, and the address's budget of failed attempts. */
  readonly checkAdmin: AdminCheck
  /** Whether a synchronous standby confirms commits (read at start, then periodically). */
  readonly durability: DurabilityWatch
  /** After an admin change: this process's own read side first (awaited), then every other process over the bus. */
  invalidate(m: Invalidation): Promise<void>
  ready(): Promise<{ ok: boolean; durability?: DurabilityWatch['current'] }>
  /** Stops serving: readiness turns false and in-flight publishes commit. */
  close(): Promise<void>
}

/** The writer's view of the root: seeds the board file (WIRE_CONFIG) once, and watches durability until the root closes. */
export async function createWriterContext(root: AppContext): Promise<WriterContext> {
  const { cfg, log, infra, publisher, policy } = root
  if (!publisher) throw new Error('the writer needs a root with the writer role')
  const { primary, schema, bus } = infra
  const boardWrite = boardWriter(primary, schema)
  // WIRE_BOARD_NAME names a board its file (WIRE_CONFIG) does not: both seed a board once, never over the admin's name
  const file = loadBoardFile(cfg.boardFile)
  const seed = cfg.boardName && !file?.name ? { ...file, name: cfg.boardName } : file
  if (seed) await boardWrite.seed(seed)
  const durability = await watchDurability(primary, log.child({ mod: 'durability' }))
  root.defer(() => durability.stop())
  let stopping = false
  return {
    cfg,
    log,
    publisher,
    signals: signalWriter(primary, schema),
    board: boardReader(primary, schema),
    boardWrite,
    checkAdmin: adminGuard(cfg.secrets.adminToken, infra.limits),
    durability,
    async invalidate(m) {
      if (m.kind !== 'signal') policy.invalidate()
      await bus.publishInvalidation(m) // resolves once this process's own read side has applied it
    },
    async ready() {
      if (stopping) return { ok: false, durability: durability.current }
      await primary.query('select 1')
      return { ok: true, durability: durability.current }
    },
    async close() {
      stopping = true
      await publisher.flush()
    },
  }
}

import { adminGuard, localIdentity, networkIdentity, type IdentityResolver } from '../../libs/shared/auth/index.js'
import { channels, type Invalidation, type WakeBus } from '../../libs/shared/bus/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { loadBoardFile } from '../../libs/shared/config/board-file.js'
import {
  boardReader,
  boardWriter,
  idempotencyKeys,
  originsOf,
  signalReader,
  signalWriter,
  type BoardReader,
  type BoardWriter,
  type SignalReader,
  type SignalWriter,
  type SignalWriterOptions,
} from '../../libs/shared/db/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createBatcher, type Batcher } from './batcher.js'
import { boardPolicy, type BoardPolicy } from './board-policy.js'
import { newIdentityGate } from './new-identities.js'
import type { PublishDeps } from './publish.js'
import { publishRateLimits } from './rate-limit.js'

/** What the writer's routes need. Everything here talks to the primary. */
export interface WriterContext {
  readonly cfg: Config
  readonly log: Logger
  readonly publish: PublishDeps
  readonly batcher: Batcher
  readonly signals: SignalWriter
  readonly signalsRead: SignalReader
  readonly board: BoardReader
  readonly boardWrite: BoardWriter
  readonly policy: BoardPolicy
  readonly bus: WakeBus
  readonly identity: IdentityResolver
  readonly checkAdmin: (authorization: string | string[] | undefined) => void
  /** After an admin change: this process's own read side first (awaited), then every other process over the bus. */
  invalidate(m: Invalidation): Promise<void>
  ready(): Promise<{ ok: boolean }>
  /** Lets in-flight publishes commit. Connections belong to Infra and are closed by main. */
  close(): Promise<void>
}

export interface WriterOptions {
  signalWriter?: SignalWriterOptions
  /** Also told of every committed head (the single process tells its own reader directly). */
  onCommit?: (head: number) => void
  /** Also told of every removal, pin and metadata change, and awaited before the admin call answers. */
  onInvalidate?: (m: Invalidation) => Promise<void>
  /** Network mode: the resolver (and its verify cache) the single process shares with its reader. */
  identity?: IdentityResolver
}

export async function createWriterContext(cfg: Config, log: Logger, infra: Infra, opts: WriterOptions = {}): Promise<WriterContext> {
  const { primary, schema, bus } = infra
  const signals = signalWriter(primary, schema, opts.signalWriter)
  const signalsRead = signalReader(primary, schema, { graceSeconds: cfg.sweep.graceSeconds })
  const board = boardReader(primary, schema)
  const boardWrite = boardWriter(primary, schema)
  const seed = loadBoardFile(cfg.boardFile)
  if (seed) await boardWrite.seed(seed)
  const policy = boardPolicy(board)
  bus.onInvalidation((m) => (m.kind === 'rules' || m.kind === 'board') && policy.invalidate())
  const identity =
    opts.identity ??
    (cfg.identity.mode === 'local'
      ? localIdentity({
          authority: cfg.authority,
          fingerprintKey: infra.fingerprintKey,
          verifiedByDefault: cfg.identity.verifiedByDefault,
          isAllowListed: (id) => policy.isAllowListed(id),
        })
      : networkIdentity({ url: cfg.identity.url, authority: cfg.authority, log }))
  const batcher = createBatcher(signals, log.child({ mod: 'batcher' }), {
    maxBatch: cfg.signals.maxBatch,
    onCommit: (head) => {
      opts.onCommit?.(head)
      bus.publishWake(head)
    },
  })
  const rl = cfg.rateLimits
  const rateLimits = publishRateLimits(
    { ...rl, keyPrefix: channels(cfg.db.schema).rateLimitPrefix },
    infra.redis,
  )
  let stopping = false
  return {
    cfg,
    log,
    batcher,
    signals,
    signalsRead,
    board,
    boardWrite,
    policy,
    bus,
    identity,
    checkAdmin: adminGuard(cfg.secrets.adminToken),
    async invalidate(m) {
      if (m.kind !== 'signal') policy.invalidate()
      await opts.onInvalidate?.(m)
      bus.publishInvalidation(m)
    },
    publish: {
      authority: cfg.authority,
      defaultTtl: cfg.signals.defaultTtl,
      unverifiedThreadsPerDay: rl.unverifiedThreadsPerDay,
      threadBitFloor: cfg.identity.mode === 'network' ? cfg.identity.threadBitFloor : null,
      identity,
      signals: signalsRead,
      policy,
      rateLimits,
      addressLimits: infra.limits,
      newIdentities: newIdentityGate(originsOf(primary, schema), infra.limits),
      keys: idempotencyKeys(primary, schema),
      batcher,
    },
    async ready() {
      if (stopping) return { ok: false }
      await primary.query('select 1')
      return { ok: true }
    },
    async close() {
      stopping = true
      await batcher.flush()
    },
  }
}

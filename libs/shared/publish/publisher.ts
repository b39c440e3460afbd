import type { IdentityResolver } from '../auth/index.js'
import { channels } from '../bus/index.js'
import type { Config } from '../config/index.js'
import { idempotencyKeys, originsOf, signalReader, signalWriter } from '../db/index.js'
import type { Infra } from '../infra/index.js'
import { publishRateLimits } from '../limits/index.js'
import type { Logger } from '../log/index.js'
import { createBatcher, type Batcher } from './batcher.js'
import { groupedFind } from './idempotency.js'
import type { BoardPolicy } from './board-policy.js'
import { newIdentityGate } from './new-identities.js'
import type { PublishDeps } from './publish.js'

/** The one publish path's parts, on the primary: what the writer's routes and the agent surfaces publish through. */
export interface Publisher {
  readonly deps: PublishDeps
  readonly batcher: Batcher
  /** Lets every publish submitted so far commit (shutdown). */
  flush(): Promise<void>
}

export interface PublisherOptions {
  /** The process's one identity resolver (the root's). */
  identity: IdentityResolver
  /** The board's rules (the root's, which admin changes invalidate). */
  policy: BoardPolicy
}

export function createPublisher(cfg: Config, log: Logger, infra: Infra, { identity, policy }: PublisherOptions): Publisher {
  const { primary, schema, bus } = infra
  const signals = signalReader(primary, schema, { graceSeconds: cfg.sweep.graceSeconds })
  const batcher = createBatcher(signalWriter(primary, schema), log.child({ mod: 'batcher' }), {
    maxBatch: cfg.signals.maxBatch,
    onCommit: (head, batch) => bus.publishWake(head, batch), // this process's own feed first (with the rows), then every other process
  })
  const rl = cfg.rateLimits
  const keys = idempotencyKeys(primary, schema)
  const deps: PublishDeps = {
    authority: cfg.authority,
    defaultTtl: cfg.signals.defaultTtl,
    unverifiedThreadsPerDay: rl.unverifiedThreadsPerDay,
    threadBitFloor: cfg.identity.mode === 'network' ? cfg.identity.threadBitFloor : null,
    identity,
    signals,
    policy,
    rateLimits: publishRateLimits({ ...rl, keyPrefix: channels(infra.boardId).rateLimitPrefix }, infra.redis),
    addressLimits: infra.limits,
    newIdentities: newIdentityGate(originsOf(primary, schema), infra.limits),
    keys,
    findKey: groupedFind(keys),
    batcher,
  }
  return { deps, batcher, flush: () => batcher.flush() }
}

import type { IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { createReadSide, type ReadSide } from '../../libs/shared/feed/index.js'
import type { Infra } from '../../libs/shared/infra/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createPublisher, type PublishDeps } from '../../libs/shared/publish/index.js'

/**
 * What MCP and A2A need: the one publish path (on the primary, as a writer) and a read side (on the
 * replica, as a reader), both in-process: no HTTP to ourselves.
 */
export interface AgentsContext {
  readonly cfg: Config
  readonly publish: PublishDeps
  readonly identity: IdentityResolver
  readonly readSide: ReadSide
  /** Per-client-address budgets, the same as the reader's and writer's routes spend. */
  readonly limits: ClientLimits
  ready(): Promise<{ ok: boolean }>
  /** Answers waiting long-polls and lets in-flight publishes commit. Connections belong to Infra. */
  close(): Promise<void>
}

export interface AgentsOptions {
  /** The single process: the read side and publish path its reader and writer already hold. */
  shared?: { readSide: ReadSide; publish: PublishDeps; identity: IdentityResolver }
}

export async function createAgentsContext(cfg: Config, log: Logger, infra: Infra, opts: AgentsOptions = {}): Promise<AgentsContext> {
  if (opts.shared) return { cfg, ...opts.shared, limits: infra.limits, ready: async () => ({ ok: true }), close: async () => {} }
  const publisher = createPublisher(cfg, log, infra)
  const readSide = await createReadSide(cfg, log, infra, { tailSize: Math.min(cfg.reader.tailSize, 1000), identity: publisher.identity })
  let stopping = false
  return {
    cfg,
    publish: publisher.deps,
    identity: publisher.identity,
    readSide,
    limits: infra.limits,
    async ready() {
      if (stopping) return { ok: false }
      await Promise.all([infra.primary.query('select 1'), infra.readDb.query('select 1')])
      return { ok: true }
    },
    async close() {
      stopping = true
      await readSide.close()
      await publisher.flush()
    },
  }
}

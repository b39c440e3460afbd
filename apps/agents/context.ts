import type { IdentityResolver } from '../../libs/shared/auth/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import type { AppContext } from '../../libs/shared/context/index.js'
import type { ReadSide } from '../../libs/shared/feed/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { PublishDeps } from '../../libs/shared/publish/index.js'

/**
 * What MCP and A2A need, a view of the root: the one publish path (on the primary, as a writer)
 * and the read side (on the replica, as a reader), both in-process: no HTTP to ourselves.
 */
export interface AgentsContext {
  readonly cfg: Config
  readonly publish: PublishDeps
  readonly identity: IdentityResolver
  readonly readSide: ReadSide
  /** The budget of register_identity (the read and publish doors spend their own). */
  readonly limits: Pick<ClientLimits, 'register'>
  ready(): Promise<{ ok: boolean }>
  /** Stops serving: waiting long-polls are answered and in-flight publishes commit. */
  close(): Promise<void>
}

export function agentsContext(root: AppContext): AgentsContext {
  const { readSide, publisher, infra } = root
  if (!readSide || !publisher) throw new Error('the agent surfaces need a root with the agents role')
  let stopping = false
  return {
    cfg: root.cfg,
    publish: publisher.deps,
    identity: root.identity,
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

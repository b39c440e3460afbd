import { localIdentity, networkIdentity, type IdentityResolver } from '../auth/index.js'
import type { Config } from '../config/index.js'
import { boardReader } from '../db/index.js'
import { createReadSide, type ReadSide } from '../feed/index.js'
import type { Logger } from '../log/index.js'
import { boardPolicy, createPublisher, type BoardPolicy, type Publisher } from '../publish/index.js'
import {
  closeOnFailure,
  closeStack,
  openInfra,
  openServiceConnections,
  type Connections,
  type Infra,
  type ServiceDb,
} from '../infra/index.js'

export { closeOnFailure, openInfra, type Infra } from '../infra/index.js'

/** The roles a process serves; the single process (`npm start`) serves every board role at once. */
export type BoardRole = 'writer' | 'reader' | 'agents' | 'sweeper'

/** Parts a test (or a tool) hands in instead of the ones the root would build. */
export interface Overrides {
  /** Connections already open (tests that seed the database first, or wrap a pool): not closed by the root. */
  infra?: Infra
  /** The read side's tail and its fallback poll (tests that force an interleaving). */
  tailSize?: number
  fallbackPollMs?: number
}

/**
 * A board process's one root (docs/architecture.md "One root"): its connections, the one identity
 * resolver, the board's publish rules, the read side and the publish path for the roles it serves,
 * and the one close stack. Every role's context is a view of it; what a role adds (the sweeper,
 * the writer's durability watch) it defers here, so everything closes in reverse order of opening.
 */
export interface AppContext {
  readonly cfg: Config
  readonly log: Logger
  readonly infra: Infra
  /** Who a token is: built once per process, so a token a publish verified counts at once on reads. */
  readonly identity: IdentityResolver
  /** The board's rules and metadata on the primary, cached a second; admin changes invalidate it everywhere. */
  readonly policy: BoardPolicy
  /** Reads: the reader's and the agents' (null when the process serves neither). */
  readonly readSide: ReadSide | null
  /** The one publish path: the writer's and the agents' (null when the process serves neither). */
  readonly publisher: Publisher | null
  defer(close: () => unknown): void
  close(): Promise<void>
}

export async function createAppContext(
  cfg: Config,
  log: Logger,
  o: { roles: readonly BoardRole[]; overrides?: Overrides },
): Promise<AppContext> {
  const roles = new Set(o.roles)
  const stack = closeStack(log)
  const ov = o.overrides ?? {}
  return closeOnFailure(stack.close, async () => {
    const reads = roles.has('reader') || roles.has('agents')
    const writes = roles.has('writer') || roles.has('agents')
    let infra = ov.infra
    if (!infra) {
      // readers and the agents process read on the replica, unless the process also writes (the single process)
      infra = await openInfra(cfg, log, {
        replica: reads && !roles.has('writer'),
        migrate: roles.has('writer') && cfg.autoMigrate,
        wakeUps: reads || writes,
      })
      stack.defer(infra.close)
    }
    const policy = boardPolicy(boardReader(infra.primary, infra.schema))
    infra.bus.onInvalidation((m) => (m.kind === 'rules' || m.kind === 'board') && policy.invalidate())
    const identity = identityOf(cfg, log, infra, policy)
    let readSide: ReadSide | null = null
    if (reads) {
      // the agents process alone keeps a smaller tail: its reads are a model's, not a fleet's followers'
      const tailSize = ov.tailSize ?? (roles.has('reader') ? cfg.reader.tailSize : Math.min(cfg.reader.tailSize, 1000))
      const side = await createReadSide(cfg, log, infra, {
        identity,
        tailSize,
        ...(ov.fallbackPollMs !== undefined && { fallbackPollMs: ov.fallbackPollMs }),
      })
      stack.defer(() => side.close()) // waiting long-polls are answered before the connections close
      readSide = side
    }
    let publisher: Publisher | null = null
    if (writes) {
      const p = createPublisher(cfg, log, infra, { identity, policy })
      stack.defer(() => p.flush()) // publishes in flight commit before the connections close
      publisher = p
    }
    return { cfg, log, infra, identity, policy, readSide, publisher, defer: stack.defer, close: stack.close }
  })
}

/**
 * The process's one identity resolver. Local mode: the token's keyed fingerprint, verified by
 * LOCAL_IDENTITY_VERIFIED or an allow rule. Network mode: the identity network, with one verify
 * cache for the whole process (docs/identity.md).
 */
function identityOf(cfg: Config, log: Logger, infra: Infra, policy: BoardPolicy): IdentityResolver {
  if (cfg.identity.mode === 'network') return networkIdentity({ url: cfg.identity.url, authority: cfg.authority, log })
  return localIdentity({
    authority: cfg.authority,
    fingerprintKey: infra.fingerprintKey,
    verifiedByDefault: cfg.identity.verifiedByDefault,
    isAllowListed: (id) => policy.isAllowListed(id),
  })
}

/** The aggregator's root: its connections and the same close stack; its parts are deferred onto it. */
export interface AggregatorRoot {
  readonly cfg: Config
  readonly log: Logger
  readonly connections: Connections
  defer(close: () => unknown): void
  close(): Promise<void>
}

/** The aggregator's: a pool on AGGREGATOR_PG_SCHEMA, migrated from its own folder (or the embedded database for a trial), Redis, budgets. */
export const createAggregatorRoot = (cfg: Config, log: Logger) =>
  serviceRoot(cfg, log, { schema: cfg.aggregator.schema, migrations: 'migrations/aggregator', applicationName: 'wire-aggregator' })

/** The identity network's root: the same shape as the aggregator's, on its own schema (or the embedded database). */
export const createIdentityRoot = (cfg: Config, log: Logger) =>
  serviceRoot(cfg, log, { schema: cfg.identityNetwork.schema, migrations: 'migrations/identity', applicationName: 'wire-identity' })

async function serviceRoot(cfg: Config, log: Logger, db: ServiceDb): Promise<AggregatorRoot> {
  const connections = await openServiceConnections(cfg, log, db)
  const stack = closeStack(log)
  stack.defer(connections.close)
  return { cfg, log, connections, defer: stack.defer, close: stack.close }
}

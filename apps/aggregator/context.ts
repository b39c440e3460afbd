import { fetch as undiciFetch, type Agent } from 'undici'
import type { FetchLike } from '../../client/src/index.js'
import type { Clock } from '../../libs/shared/clock.js'
import type { Config } from '../../libs/shared/config/index.js'
import { closeOnFailure, createAggregatorRoot } from '../../libs/shared/context/index.js'
import type { Db } from '../../libs/shared/db/index.js'
import type { ClientLimits } from '../../libs/shared/limits/index.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { addressPolicy } from './outbound/address-policy.js'
import { checkHost, outboundAgent } from './outbound/agent.js'
import type { FetchJsonOptions } from './outbound/fetch-json.js'
import { boardProxy, type BoardProxy } from './proxy.js'
import { registry, type Registry } from './registry/registry.js'
import { registryStore, type RegistryStore } from './registry/store.js'
import { boardFollowers, type BoardFollowers } from './search/followers.js'
import { indexStore, type IndexStore } from './search/index-store.js'
import { searchSide, type SearchSide } from './search/search.js'

export interface AggregatorContext {
  readonly cfg: Config
  readonly log: Logger
  readonly db: Db
  readonly agent: Agent
  readonly store: RegistryStore
  readonly registry: Registry
  readonly index: IndexStore
  readonly proxy: BoardProxy
  readonly search: SearchSide
  readonly followers: BoardFollowers
  readonly limits: ClientLimits
  close(): Promise<void>
}

export interface AggregatorOptions {
  /** Follow the registered boards for search (default true). */
  follow?: boolean
  /** How often followers are matched to the registry, ms (default 2000). */
  followSyncMs?: number
  /** How long each followed read waits at its board for a new signal, seconds (default 25: tests make a quiet board answer sooner). */
  followWaitSeconds?: number
  /** How long the proxy uses a registry lookup, ms (default 5000). */
  proxyLookupTtlMs?: number
  /** The clock the proxy's byte budget refills by (a test's drives it; default the system's). */
  clock?: Clock
}

/** The aggregator's parts on its root (libs/shared/context): each is deferred onto the root's close stack, so all close in reverse, also after a partial start. */
export async function createAggregatorContext(cfg: Config, log: Logger, o: AggregatorOptions = {}): Promise<AggregatorContext> {
  const root = await createAggregatorRoot(cfg, log)
  return closeOnFailure(root.close, async () => {
    const a = cfg.aggregator
    const { primary: db, schema, redis, limits } = root.connections
    const policy = addressPolicy(a.allowHosts)
    const agent = outboundAgent(policy, { connections: a.connectionsPerBoard, connectTimeoutMs: a.fetchTimeoutMs })
    root.defer(() => agent.close())
    const fetchOpts: FetchJsonOptions = { dispatcher: agent, policy, timeoutMs: a.fetchTimeoutMs, maxBytes: a.discoveryMaxBytes }
    const store = registryStore(db, schema)
    const index = indexStore(db, schema)
    const reg = registry(cfg, store, fetchOpts, log.child({ mod: 'registry' }), redis)
    const proxy = boardProxy(store, agent, policy, {
      maxInFlight: cfg.reader.maxWaiters,
      retryAfterSeconds: Math.min(60, a.recheckSeconds),
      limits,
      sharePolls: a.sharedPolls,
      answerMaxBytes: a.answerMaxBytes,
      perAddressMax: a.proxyPerAddressMax,
      perBoardMax: a.proxyPerBoardMax,
      timeoutMs: a.proxyTimeoutMs,
      boardBytesPerSecond: a.proxyBoardBytesPerSecond,
      maxBoards: a.maxBoards,
      lookupTtlMs: o.proxyLookupTtlMs,
      clock: o.clock,
    })
    const search = searchSide(index, { maxWaiters: cfg.reader.maxWaiters, pollMs: cfg.reader.fallbackPollMs })
    root.defer(() => search.close())
    // the client library's fetch, through the guarded agent; a redirect is refused, not followed unchecked
    const fetch: FetchLike = async (input, init) => {
      checkHost(policy, new URL(input))
      return (await undiciFetch(input, { ...(init as object), dispatcher: agent, redirect: 'error' })) as unknown as Response
    }
    const followers = boardFollowers(store, index, log.child({ mod: 'follow' }), {
      lockUrl: cfg.db.kind === 'postgres' ? cfg.db.directUrl : null,
      lockKey: `wire:aggregator-follow:${a.schema}`,
      syncMs: o.followSyncMs ?? 2000,
      fetch,
      onIndexed: () => search.wake(),
      enabled: o.follow !== false,
      quota: { rows: a.boardRowsMax, bytes: a.boardBytesMax, pinHorizonSeconds: a.pinHorizonSeconds },
      pageMaxBytes: a.pageMaxBytes,
      pagesPerMinute: a.boardPagesPerMinute,
      followMaxBytes: a.followMaxBytes,
      pageBodyTimeoutMs: a.fetchTimeoutMs,
      stalledMs: a.followStalledSeconds * 1000,
      waitSeconds: o.followWaitSeconds,
    })
    root.defer(() => followers.stop())
    return {
      cfg,
      log,
      db,
      agent,
      store,
      registry: reg,
      index,
      proxy,
      search,
      followers,
      limits,
      close: root.close,
    }
  })
}

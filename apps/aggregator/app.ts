import type { FastifyInstance } from 'fastify'
import type { Config } from '../../libs/shared/config/index.js'
import { closeOnFailure } from '../../libs/shared/context/index.js'
import { createHttpApp, healthRoutes, mcpRoutes } from '../../libs/shared/http/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createAggregatorContext, type AggregatorContext, type AggregatorOptions } from './context.js'
import { aggregatorMcp } from './mcp.js'
import { watchAggregator } from './metrics.js'
import { startRechecks } from './rechecks.js'
import { discoveryRoutes } from './routes/discovery.js'
import { proxyRoutes } from './routes/proxy.js'
import { registryRoutes } from './routes/registry.js'
import { searchRoutes } from './routes/search.js'

/** A request that may wait: `wait` present and above zero (the route still validates it). */
function waits(query: unknown): boolean {
  const w = (query as { wait?: unknown } | null)?.wait
  const v = Array.isArray(w) ? w[w.length - 1] : w
  return typeof v === 'string' && v.length <= 32 && Number(v) > 0
}

/**
 * The aggregator (docs/aggregator.md): a registry of boards, a proxy at /sw/{address}/…, and search
 * across the boards it follows. Its tables live in AGGREGATOR_PG_SCHEMA, on PostgreSQL (or the
 * embedded database for a trial: one process, which follows every board itself).
 */
export async function startAggregator(
  cfg: Config,
  log: Logger,
  opts: AggregatorOptions = {},
): Promise<StartedApp & { app: FastifyInstance; ctx: AggregatorContext }> {
  const ctx = await createAggregatorContext(cfg, log, opts)
  return closeOnFailure(ctx.close, async () => {
    const rechecks = await startRechecks(ctx)
    watchAggregator({
      proxiedInFlight: () => ctx.proxy.inFlight,
      searchesWaiting: () => ctx.search.waiting,
      boardsFollowed: () => ctx.followers.following.length,
      followBytesHeld: () => ctx.followers.bytesHeld,
      followLagSeconds: () => ctx.followers.lag.seconds(),
      boardsStalled: () => ctx.followers.lag.stalled(),
      proxyBudget: () => ({ ...ctx.proxy.budget.counts, over: ctx.proxy.budget.over() }),
    })
    const app = createHttpApp(log, cfg.http, ctx.limits) // every request spends its address's request budget first
    app.register(healthRoutes, {
      ready: async () => {
        await ctx.db.query('select 1')
        return { ok: true }
      },
    })
    app.register(async (scoped) => {
      // a waiting long-poll, proxied or searched, holds one of its address's long-poll slots until it ends
      scoped.addHook('onRequest', async (req, reply) => {
        if (req.method !== 'GET' || !ctx.limits.pollsLimited || !waits(req.query)) return
        const release = await ctx.limits.openPoll(req.ip)
        reply.raw.once('close', release)
      })
      await scoped.register(registryRoutes, { ctx })
      await scoped.register(searchRoutes, { ctx })
      await scoped.register(proxyRoutes, { ctx })
      await scoped.register(discoveryRoutes, { ctx })
      const mcp = aggregatorMcp(ctx)
      await scoped.register(mcpRoutes, { baseUrl: cfg.baseUrl, load: async () => mcp })
    })
    app.addHook('preClose', async () => ctx.search.close())
    const close = async () => {
      await rechecks.stop()
      await app.close()
      await ctx.close()
    }
    return { app, ctx, close }
  })
}

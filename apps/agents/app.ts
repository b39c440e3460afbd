import type { FastifyInstance } from 'fastify'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes, mcpRoutes } from '../../libs/shared/http/index.js'
import { closeOnFailure, createAppContext, type AppContext } from '../../libs/shared/context/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { a2aRoutes } from './a2a.js'
import { agentsContext, type AgentsContext } from './context.js'
import { hostGuard } from './host-guard.js'
import { agentSurfaces } from './surfaces.js'

export interface AgentRoutesOptions {
  ctx: AgentsContext
  /**
   * Load the MCP and A2A SDKs before the routes are ready (the agents process, which exists to serve
   * them: a broken install fails its start, and no first request waits on the load). Otherwise each
   * loads on the first request that needs it (the single process: surfaces.ts).
   */
  eager?: boolean
}

/** The agent surfaces: MCP at /mcp, A2A at /a2a with its card at /.well-known/agent-card.json. */
export async function agentRoutes(app: FastifyInstance, { ctx, eager = false }: AgentRoutesOptions) {
  const surfaces = agentSurfaces(ctx)
  if (eager) await Promise.all([surfaces.mcp(), surfaces.a2a()])
  await app.register(mcpRoutes, { baseUrl: ctx.cfg.baseUrl, load: surfaces.mcp, onRequest: hostGuard(ctx.cfg) })
  await app.register(a2aRoutes, { surfaces, cfg: ctx.cfg })
  // long-polls waiting inside a tool call or a task answer now, not at their deadline
  app.addHook('preClose', async () => ctx.close())
}

/** The agents process: reads on the replica, publishes on the primary. It never migrates (writers do). */
export async function startAgents(
  cfg: Config,
  log: Logger,
): Promise<StartedApp & { app: FastifyInstance; ctx: AgentsContext; root: AppContext }> {
  const root = await createAppContext(cfg, log, { roles: ['agents'] })
  return closeOnFailure(root.close, async () => {
    const ctx = agentsContext(root)
    const app = createHttpApp(log, cfg.http, root.infra.limits)
    app.register(healthRoutes, { ready: () => ctx.ready() })
    app.register(agentRoutes, { ctx, eager: true })
    return { app, ctx, root, close: async () => (await app.close(), await root.close()) }
  })
}

import type { FastifyInstance } from 'fastify'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { Presence } from '../../libs/shared/bus/index.js'
import type { ReadSide } from '../../libs/shared/feed/index.js'
import { agentRoutes } from './agents/index.js'
import type { WriterContext } from './context.js'
import { adminBoardRoutes } from './routes/admin-board.js'
import { adminRuleRoutes } from './routes/admin-rules.js'
import { adminSignalRoutes } from './routes/admin-signals.js'
import { publishRoutes } from './routes/publish.js'

export const API_PREFIXES = ['/sw', '/sw/v1'] as const

/**
 * The writer's routes (publish and admin) under /sw and /sw/v1, and, given a read side, the agent
 * surfaces (/mcp, /a2a). Registered on a base app by main or the single process.
 */
export async function writerRoutes(app: FastifyInstance, { ctx, presence, reads }: { ctx: WriterContext; presence: Presence; reads?: ReadSide }) {
  for (const prefix of API_PREFIXES) {
    await app.register(publishRoutes, { prefix, ctx })
    await app.register(adminBoardRoutes, { prefix: `${prefix}/admin`, ctx, presence })
    await app.register(adminRuleRoutes, { prefix: `${prefix}/admin`, ctx })
    await app.register(adminSignalRoutes, { prefix: `${prefix}/admin`, ctx })
  }
  if (reads) await app.register(agentRoutes, { ctx, reads })
  app.addHook('preClose', async () => ctx.close())
}

/** The writer process's app: health, publish, admin and (given a read side) MCP and A2A. No listen(): tests call this too. */
export function buildWriter(ctx: WriterContext, presence: Presence, reads?: ReadSide): FastifyInstance {
  const app = createHttpApp(ctx.log, ctx.cfg.http)
  app.register(healthRoutes, { ready: () => ctx.ready() })
  app.register(writerRoutes, { ctx, presence, ...(reads && { reads }) })
  return app
}

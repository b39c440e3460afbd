import type { FastifyInstance } from 'fastify'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { Presence } from '../../libs/shared/bus/index.js'
import type { WriterContext } from './context.js'
import { adminBoardRoutes } from './routes/admin-board.js'
import { adminRuleRoutes } from './routes/admin-rules.js'
import { adminSignalRoutes } from './routes/admin-signals.js'
import { publishRoutes } from './routes/publish.js'

export const API_PREFIXES = ['/sw', '/sw/v1'] as const

/** The writer's routes (publish and admin), under /sw and /sw/v1. Registered on a base app by main or the single process. */
export async function writerRoutes(app: FastifyInstance, { ctx, presence }: { ctx: WriterContext; presence: Presence }) {
  for (const prefix of API_PREFIXES) {
    await app.register(publishRoutes, { prefix, ctx })
    await app.register(adminBoardRoutes, { prefix: `${prefix}/admin`, ctx, presence })
    await app.register(adminRuleRoutes, { prefix: `${prefix}/admin`, ctx })
    await app.register(adminSignalRoutes, { prefix: `${prefix}/admin`, ctx })
  }
  app.addHook('preClose', async () => ctx.close())
}

/** The writer process's app: health, publish and admin. No listen(): tests call this too. */
export function buildWriter(ctx: WriterContext, presence: Presence): FastifyInstance {
  const app = createHttpApp(ctx.log)
  app.register(healthRoutes, { ready: () => ctx.ready() })
  app.register(writerRoutes, { ctx, presence })
  return app
}

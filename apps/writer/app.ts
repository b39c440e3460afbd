import type { FastifyInstance } from 'fastify'
import type { Presence } from '../../libs/shared/bus/index.js'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes, installFastPath } from '../../libs/shared/http/index.js'
import { closeOnFailure, createAppContext, type AppContext } from '../../libs/shared/context/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { createWriterContext, type WriterContext } from './context.js'
import { adminBoardRoutes } from './routes/admin-board.js'
import { adminRuleRoutes } from './routes/admin-rules.js'
import { adminSignalRoutes } from './routes/admin-signals.js'
import { publishFastPath } from './publish-fast-path.js'
import { publishRoutes } from './routes/publish.js'

const API_PREFIXES = ['/sw', '/sw/v1'] as const

/** The writer's routes (publish and admin) under /sw and /sw/v1, and the fast path that serves most publishes below fastify. In-flight publishes commit before close. */
export async function writerRoutes(app: FastifyInstance, { ctx, presence }: { ctx: WriterContext; presence: Presence }) {
  installFastPath(app, publishFastPath(ctx))
  for (const prefix of API_PREFIXES) {
    await app.register(publishRoutes, { prefix, ctx })
    await app.register(adminBoardRoutes, { prefix: `${prefix}/admin`, ctx, presence })
    await app.register(adminRuleRoutes, { prefix: `${prefix}/admin`, ctx })
    await app.register(adminSignalRoutes, { prefix: `${prefix}/admin`, ctx })
  }
  app.addHook('preClose', async () => ctx.close())
}

/** The writer process: migrations (unless WIRE_AUTO_MIGRATE=0), health, publish and admin, on the primary. */
export async function startWriter(
  cfg: Config,
  log: Logger,
): Promise<StartedApp & { app: FastifyInstance; ctx: WriterContext; root: AppContext }> {
  const root = await createAppContext(cfg, log, { roles: ['writer'] })
  return closeOnFailure(root.close, async () => {
    const ctx = await createWriterContext(root)
    const app = createHttpApp(log, cfg.http, root.infra.limits)
    app.register(healthRoutes, { ready: () => ctx.ready() })
    app.register(writerRoutes, { ctx, presence: root.infra.presence })
    return { app, ctx, root, close: async () => (await app.close(), await root.close()) }
  })
}

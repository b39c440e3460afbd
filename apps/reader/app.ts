import type { FastifyInstance } from 'fastify'
import type { Config } from '../../libs/shared/config/index.js'
import { createHttpApp, healthRoutes, installFastPath } from '../../libs/shared/http/index.js'
import { closeOnFailure, createAppContext, type AppContext, type Overrides } from '../../libs/shared/context/index.js'
import type { StartedApp } from '../../libs/shared/lifecycle.js'
import type { Logger } from '../../libs/shared/log/index.js'
import { readerContext, type ReaderContext } from './context.js'
import { boardRoutes } from './routes/board.js'
import { discoveryRoutes } from './routes/discovery.js'
import { onboardingRoutes } from './routes/onboarding.js'
import { openApiRoutes } from './routes/openapi.js'
import { signalRoutes } from './routes/signals.js'
import { signalsFastPath } from './signals-fast-path.js'
import { statsRoutes } from './routes/stats.js'
import { viewRoutes } from './routes/view.js'

/** What this build serves, for the discovery document. */
const FEATURES = ['signals', 'poll', 'stats', 'search', 'tags', 'mcp', 'a2a']

/**
 * The reader's routes under /sw and /sw/v1, plus discovery, and the fast path that serves most
 * GET /sw/signals below fastify. Waiting long-polls are answered before close.
 */
export async function readerRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  installFastPath(app, signalsFastPath(ctx))
  for (const prefix of ['/sw', '/sw/v1']) {
    await app.register(signalRoutes, { prefix, ctx })
    await app.register(boardRoutes, { prefix, ctx })
    await app.register(statsRoutes, { prefix, ctx })
    await app.register(openApiRoutes, { prefix, ctx })
  }
  await app.register(discoveryRoutes, { ctx, features: FEATURES })
  await app.register(onboardingRoutes, { ctx })
  await app.register(viewRoutes, { ctx })
  app.addHook('preClose', async () => ctx.close())
}

/** The reader process: health, reads, long-polls, discovery and the viewer page, on the replica. Readers never migrate. */
export async function startReader(
  cfg: Config,
  log: Logger,
  overrides: Overrides = {},
): Promise<StartedApp & { app: FastifyInstance; ctx: ReaderContext; root: AppContext }> {
  const root = await createAppContext(cfg, log, { roles: ['reader'], overrides })
  return closeOnFailure(root.close, async () => {
    const ctx = readerContext(root)
    const app = createHttpApp(log, cfg.http, root.infra.limits)
    app.register(healthRoutes, { ready: () => ctx.ready() })
    app.register(readerRoutes, { ctx })
    return { app, ctx, root, close: async () => (await app.close(), await root.close()) }
  })
}

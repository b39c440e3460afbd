import type { FastifyInstance } from 'fastify'
import { createHttpApp, healthRoutes, installReadLimits } from '../../libs/shared/http/index.js'
import type { ReaderContext } from './context.js'
import { boardRoutes } from './routes/board.js'
import { discoveryRoutes } from './routes/discovery.js'
import { signalRoutes } from './routes/signals.js'
import { statsRoutes } from './routes/stats.js'

/** What this build serves, for the discovery document. */
export const FEATURES = ['signals', 'poll', 'stats', 'search', 'tags', 'mcp', 'a2a']

/** The reader's routes under /sw and /sw/v1, plus discovery. Waiting long-polls are answered before close. */
export async function readerRoutes(app: FastifyInstance, { ctx, features = FEATURES }: { ctx: ReaderContext; features?: string[] }) {
  installReadLimits(app, ctx.limits) // per client address: reads and waiting long-polls (first: the routes below inherit it)
  for (const prefix of ['/sw', '/sw/v1']) {
    await app.register(signalRoutes, { prefix, ctx })
    await app.register(boardRoutes, { prefix, ctx })
    await app.register(statsRoutes, { prefix, ctx })
  }
  await app.register(discoveryRoutes, { ctx, features })
  app.addHook('preClose', async () => ctx.close())
}

/** The reader process's app: health, reads, long-polls and discovery. No listen(): tests call this too. */
export function buildReader(ctx: ReaderContext): FastifyInstance {
  const app = createHttpApp(ctx.log, ctx.cfg.http)
  app.register(healthRoutes, { ready: () => ctx.ready() })
  app.register(readerRoutes, { ctx })
  return app
}

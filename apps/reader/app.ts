import type { FastifyInstance } from 'fastify'
import { createHttpApp, healthRoutes } from '../../libs/shared/http/index.js'
import type { ReaderContext } from './context.js'
import { boardRoutes } from './routes/board.js'
import { discoveryRoutes } from './routes/discovery.js'
import { signalRoutes } from './routes/signals.js'
import { statsRoutes } from './routes/stats.js'
import { viewRoutes } from './routes/view.js'

/** What this build serves, for the discovery document. */
export const FEATURES = ['signals', 'poll', 'stats', 'search', 'tags', 'mcp', 'a2a']

/** The reader's routes under /sw and /sw/v1, plus discovery. Waiting long-polls are answered before close. */
export async function readerRoutes(app: FastifyInstance, { ctx, features = FEATURES }: { ctx: ReaderContext; features?: string[] }) {
  for (const prefix of ['/sw', '/sw/v1']) {
    await app.register(signalRoutes, { prefix, ctx })
    await app.register(boardRoutes, { prefix, ctx })
    await app.register(statsRoutes, { prefix, ctx })
  }
  await app.register(discoveryRoutes, { ctx, features })
  await app.register(viewRoutes, { ctx })
  app.addHook('preClose', async () => ctx.close())
}

/** The reader process's app: health, reads, long-polls, discovery and the viewer page. No listen(): tests call this too. */
export function buildReader(ctx: ReaderContext): FastifyInstance {
  const app = createHttpApp(ctx.log)
  app.register(healthRoutes, { ready: () => ctx.ready() })
  app.register(readerRoutes, { ctx })
  return app
}

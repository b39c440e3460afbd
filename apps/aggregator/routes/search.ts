import type { FastifyInstance } from 'fastify'
import { abortOnClose } from '../../../libs/shared/http/index.js'
import type { AggregatorContext } from '../context.js'
import { parseSearchQuery } from '../search/search.js'

/** GET /search/signals: every registered board's active signals, each with the `board` it came from. */
export async function searchRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  app.get('/search/signals', async (req, reply) => {
    const q = parseSearchQuery(req.query as Record<string, unknown>, Date.now())
    const page = await ctx.search.search(q, abortOnClose(reply))
    return { ...page, serverNow: new Date().toISOString() }
  })
}

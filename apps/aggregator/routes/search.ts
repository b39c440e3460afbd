import type { FastifyInstance } from 'fastify'
import { abortOnClose } from '../../../libs/shared/http/index.js'
import type { AggregatorContext } from '../context.js'
import { parseSearchQuery } from '../search/search.js'

/** GET /search/signals' answer, and MCP search_signals'. */
export async function searchAnswer(ctx: AggregatorContext, q: ReturnType<typeof parseSearchQuery>, left: AbortSignal) {
  return { ...(await ctx.search.search(q, left)), serverNow: new Date().toISOString() }
}

/** GET /search/signals: every registered board's active signals, each with the `board` it came from. */
export async function searchRoutes(app: FastifyInstance, { ctx }: { ctx: AggregatorContext }) {
  app.get('/search/signals', async (req, reply) =>
    searchAnswer(ctx, parseSearchQuery(req.query as Record<string, unknown>, Date.now()), abortOnClose(reply)),
  )
}

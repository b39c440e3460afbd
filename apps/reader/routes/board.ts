import type { FastifyInstance } from 'fastify'
import { TagsQuery } from '../../../libs/shared/api/index.js'
import { normaliseTags } from '../../../libs/shared/domain/index.js'
import { describeBoard } from '../../../libs/shared/views/index.js'
import type { ReaderContext } from '../context.js'

/** GET /sw/wire (board metadata and stats) and GET /sw/tags (type-ahead over active signals). */
export async function boardRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  app.get('/wire', async () => describeBoard(ctx.cfg.authority, ctx.readSide.board, ctx.readSide.presence))
  app.get('/tags', async (req) => {
    const q = TagsQuery.parse(req.query)
    const prefix = q.q ? (normaliseTags([q.q])[0] ?? null) : null
    const limit = Math.min(200, Math.max(1, Number(q.limit ?? 50)))
    return { tags: await ctx.readSide.signals.tags(prefix, limit) }
  })
}

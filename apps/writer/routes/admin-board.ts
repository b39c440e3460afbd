import type { FastifyInstance } from 'fastify'
import { BoardPatch } from '../../../libs/shared/api/index.js'
import type { Presence } from '../../../libs/shared/bus/index.js'
import { parseJsonBody } from '../../../libs/shared/http/index.js'
import { describeBoard } from '../../../libs/shared/views/index.js'
import type { WriterContext } from '../context.js'

/** GET and PATCH /sw/admin/wire: board metadata, including allowedSignalTypes. */
export async function adminBoardRoutes(app: FastifyInstance, { ctx, presence }: { ctx: WriterContext; presence: Presence }) {
  app.addHook('onRequest', (req) => ctx.checkAdmin(req.headers.authorization, req.ip))
  app.get('/wire', async () => describeBoard(ctx.cfg.authority, ctx.board, presence))
  app.patch('/wire', async (req) => {
    const patch = BoardPatch.parse(parseJsonBody(req.body))
    await ctx.boardWrite.patch(patch)
    await ctx.invalidate({ kind: 'board' })
    req.log.info({ fields: Object.keys(patch) }, 'board metadata changed')
    return describeBoard(ctx.cfg.authority, ctx.board, presence)
  })
}

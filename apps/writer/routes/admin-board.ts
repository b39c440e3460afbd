import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Presence } from '../../../libs/shared/bus/index.js'
import { parseJsonBody } from '../../../libs/shared/http/index.js'
import { describeBoard } from '../../../libs/shared/views/index.js'
import type { WriterContext } from '../context.js'

const BoardPatch = z
  .object({
    name: z.string().trim().min(1).max(128).nullable().optional(),
    description: z.string().max(2048).nullable().optional(),
    allowedSignalTypes: z.array(z.string().trim().min(1).max(128)).max(256).nullable().optional(),
  })
  .strict()

/** GET and PATCH /sw/admin/wire: board metadata, including allowedSignalTypes. */
export async function adminBoardRoutes(app: FastifyInstance, { ctx, presence }: { ctx: WriterContext; presence: Presence }) {
  app.addHook('onRequest', async (req) => ctx.checkAdmin(req.headers.authorization))
  app.get('/wire', async () => describeBoard(ctx.cfg.authority, ctx.board, presence))
  app.patch('/wire', async (req) => {
    const patch = BoardPatch.parse(parseJsonBody(req.body))
    await ctx.boardWrite.patch(patch)
    await ctx.invalidate({ kind: 'board' })
    req.log.info({ fields: Object.keys(patch) }, 'board metadata changed')
    return describeBoard(ctx.cfg.authority, ctx.board, presence)
  })
}

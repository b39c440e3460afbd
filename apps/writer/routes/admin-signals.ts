import type { FastifyInstance } from 'fastify'
import { parseSignalRef, serializeSignal, WireError } from '../../../libs/shared/domain/index.js'
import { sendJsonText } from '../../../libs/shared/http/index.js'
import type { WriterContext } from '../context.js'

/** Moderation removal and pins. Every change reaches every reader's cache at once (an invalidation). */
export async function adminSignalRoutes(app: FastifyInstance, { ctx }: { ctx: WriterContext }) {
  app.addHook('onRequest', (req) => ctx.checkAdmin(req.headers.authorization, req.ip))
  const idOf = (raw: string) => {
    try {
      return parseSignalRef(raw, ctx.cfg.authority)
    } catch {
      throw new WireError('not_found', 'no such signal')
    }
  }
  app.delete<{ Params: { id: string } }>('/signals/:id', async (req) => {
    const id = idOf(req.params.id)
    if (!(await ctx.signals.remove(id))) throw new WireError('not_found', 'no such signal')
    await ctx.invalidate({ kind: 'signal', id })
    req.log.info({ id }, 'signal removed')
    return { ok: true }
  })
  for (const [method, pinned] of [
    ['POST', true],
    ['DELETE', false],
  ] as const) {
    app.route<{ Params: { id: string } }>({
      method,
      url: '/signals/:id/pin',
      handler: async (req, reply) => {
        const signal = await ctx.signals.setPinned(idOf(req.params.id), pinned)
        if (!signal) throw new WireError('not_found', 'no such signal')
        await ctx.invalidate({ kind: 'signal', id: signal.id })
        req.log.info({ id: signal.id, pinned }, pinned ? 'signal pinned' : 'signal unpinned')
        return sendJsonText(reply, `{"ok":true,"signal":${serializeSignal(signal, ctx.cfg.authority)}}`)
      },
    })
  }
}

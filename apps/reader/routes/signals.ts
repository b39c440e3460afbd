import type { FastifyInstance } from 'fastify'
import { parseReadQuery } from '../../../libs/shared/domain/index.js'
import { pageBody, signalJson, threadJson } from '../../../libs/shared/feed/index.js'
import { abortOnClose, sendJsonText } from '../../../libs/shared/http/index.js'
import type { ReaderContext } from '../context.js'

/** GET /sw/signals (poll and long-poll), /sw/signals/{id} and /sw/signals/{id}/thread. */
export async function signalRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  app.get('/signals', async (req, reply) => {
    const q = parseReadQuery(req.query as Record<string, unknown>, Date.now(), ctx.cfg.authority)
    ctx.presence.touch(ctx.identity.peek(req.headers.authorization) ?? `ip:${req.ip}`)
    const page = await ctx.feed.read(q, abortOnClose(reply))
    reply.header('cache-control', 'no-store')
    return reply.type('application/json; charset=utf-8').send(pageBody(page))
  })

  // `*` so an unencoded sw://host/signals/<id> URI works as well as a raw id
  app.get<{ Params: { '*': string } }>('/signals/*', async (req, reply) => {
    const ref = req.params['*']
    if (ref.endsWith('/thread')) return sendJsonText(reply, await threadJson(ctx, ctx.cfg.authority, ref.slice(0, -'/thread'.length)))
    return sendJsonText(reply, await signalJson(ctx, ctx.cfg.authority, ref))
  })
}

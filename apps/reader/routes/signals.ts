import type { FastifyInstance } from 'fastify'
import { parseReadQuery } from '../../../libs/shared/domain/index.js'
import { pageBody, signalJson, threadJson, type FeedPage } from '../../../libs/shared/feed/index.js'
import { abortOnClose, sendJsonText } from '../../../libs/shared/http/index.js'
import type { ReaderContext } from '../context.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/** Who polls, for recentPollers: the token's identity when it names one, else the client address. */
export const pollerOf = (ctx: ReaderContext, authorization: string | undefined, address: string) => ctx.identity.peek(authorization) ?? `ip:${address}`

/**
 * GET /sw/signals (poll and long-poll; most of them are served by the HTTP lane, signals-lane.ts, and
 * come here when the lane hands a connection to fastify), /sw/signals/{id} and /sw/signals/{id}/thread. */
export async function signalRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  app.get('/signals', async (req, reply) => {
    const q = parseReadQuery(req.query as Record<string, unknown>, Date.now(), ctx.cfg.authority)
    ctx.presence.touch(pollerOf(ctx, req.headers.authorization, req.ip))
    const page = await ctx.feed.read(q, q.waitMs > 0 ? abortOnClose(reply) : undefined) // only a wait needs to hear the client leave
    reply.header('cache-control', 'no-store')
    return reply.type(JSON_TYPE).send(pageBody(page)) // a page woken waiters share is encoded once (pageBody)
  })

  // `*` so an unencoded sw://host/signals/<id> URI works as well as a raw id
  app.get<{ Params: { '*': string } }>('/signals/*', async (req, reply) => {
    const ref = req.params['*']
    if (ref.endsWith('/thread')) return sendJsonText(reply, await threadJson(ctx, ctx.cfg.authority, ref.slice(0, -'/thread'.length)))
    return sendJsonText(reply, await signalJson(ctx, ctx.cfg.authority, ref))
  })
}

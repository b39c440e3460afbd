import type { FastifyInstance } from 'fastify'
import { pageBody } from '../../../libs/shared/feed/index.js'
import { abortOnClose, callerOf, DOOR, sendJsonText } from '../../../libs/shared/http/index.js'
import type { ReaderContext } from '../context.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/** The query text after `?`, as the fast path reads it: one parser (and cache) for both paths. */
const queryText = (url: string) => {
  const qm = url.indexOf('?')
  return qm < 0 ? '' : url.slice(qm + 1)
}

/**
 * GET /sw/signals (poll and long-poll; most are served by the fast path, signals-fast-path.ts, and
 * come here when it hands a connection to fastify), /sw/signals/{id} and /sw/signals/{id}/thread.
 * Each goes through the read side's door, which spends the caller's budgets.
 */
export async function signalRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  const door = ctx.readSide
  app.get('/signals', { config: DOOR }, async (req, reply) => {
    reply.header('cache-control', 'no-store') // on refusals too: the fast path sends what this route sends
    const q = door.query(queryText(req.url))
    const page = await door.read(callerOf(req, q.waitMs > 0 ? abortOnClose(reply) : undefined), q)
    return reply.type(JSON_TYPE).send(pageBody(page)) // a page woken waiters share is encoded once (pageBody)
  })

  // `*` so an unencoded sw://host/signals/<id> URI works as well as a raw id
  app.get<{ Params: { '*': string } }>('/signals/*', { config: DOOR }, async (req, reply) => {
    const ref = req.params['*']
    if (ref.endsWith('/thread')) return sendJsonText(reply, await door.thread(callerOf(req), ref.slice(0, -'/thread'.length)))
    return sendJsonText(reply, await door.byId(callerOf(req), ref))
  })
}

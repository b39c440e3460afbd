import type { FastifyInstance } from 'fastify'
import { parseReadQuery, parseSignalRef, serializeSignal, WireError, type Signal } from '../../../libs/shared/domain/index.js'
import { sendJsonText } from '../../../libs/shared/http/index.js'
import type { ReaderContext } from '../context.js'

const list = (jsons: string[]) => `[${jsons.join(',')}]`
const now = () => JSON.stringify(new Date().toISOString())

/** GET /sw/signals (poll and long-poll), /sw/signals/{id} and /sw/signals/{id}/thread. */
export async function signalRoutes(app: FastifyInstance, { ctx }: { ctx: ReaderContext }) {
  app.get('/signals', async (req, reply) => {
    const q = parseReadQuery(req.query as Record<string, unknown>, Date.now())
    ctx.presence.touch(ctx.identity.peek(req.headers.authorization) ?? `ip:${req.ip}`)
    const page = await ctx.feed.read(q, (gone) => reply.raw.once('close', () => !reply.raw.writableEnded && gone()))
    reply.header('cache-control', 'no-store')
    return sendJsonText(reply, `{"signals":${list(page.jsons)},"nextCursor":${page.nextCursor},"serverNow":${now()}}`)
  })

  // `*` so an unencoded sw://host/signals/<id> URI works as well as a raw id
  app.get<{ Params: { '*': string } }>('/signals/*', async (req, reply) => {
    let ref = req.params['*']
    const thread = ref.endsWith('/thread')
    if (thread) ref = ref.slice(0, -'/thread'.length)
    let id: string
    try {
      id = parseSignalRef(ref, ctx.cfg.authority)
    } catch {
      throw new WireError('not_found', 'no such signal')
    }
    // @NOTE the rows just read, serialised as they are: the tail's cached copy may predate a pin or unpin
    const ser = (s: Signal) => serializeSignal(s, ctx.cfg.authority)
    if (thread) {
      const signals = await ctx.signals.thread(id)
      if (!signals.length || signals[0]!.id !== id) throw new WireError('not_found', 'no such signal')
      return sendJsonText(reply, `{"signals":${list(signals.map(ser))}}`)
    }
    const signal = await ctx.signals.byId(id)
    if (!signal) throw new WireError('not_found', 'no such signal')
    const replies = await ctx.signals.replies(id)
    return sendJsonText(reply, `{"signal":${ser(signal)},"replies":${list(replies.map(ser))},"serverNow":${now()}}`)
  })
}

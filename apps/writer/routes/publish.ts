import type { FastifyInstance } from 'fastify'
import { callerOf, DOOR, PROBE_ADDRESS, sendJsonText } from '../../../libs/shared/http/index.js'
import { metrics } from '../../../libs/shared/metrics/index.js'
import type { WriterContext } from '../context.js'
import { publishAnswer, publishSignal } from '../../../libs/shared/publish/index.js'

/**
 * POST /sw/signals: publish one signal; 200 `{ok:true, signal}` once it is committed. With an
 * Idempotency-Key, a retry within 24 h answers the original signal instead of storing another.
 * Most publishes are served below fastify, by the fast path (publish-fast-path.ts); this route
 * serves the rest, and its answers are the ones the fast path's are compared with.
 */
export async function publishRoutes(app: FastifyInstance, { ctx }: { ctx: WriterContext }) {
  app.addHook('onResponse', (req, reply, done) => {
    if (req.ip === PROBE_ADDRESS) return done() // the fast path's probe of the route's headers (publish-fast-path.ts), not a publish
    metrics.publishes.inc({ code: String(reply.statusCode) })
    if (reply.statusCode === 200) metrics.publishSeconds.observe(reply.elapsedTime / 1000)
    done()
  })
  app.post('/signals', { config: DOOR }, async (req, reply) => {
    // the publish path spends the attempt budget first
    const body = typeof req.body === 'string' ? req.body : undefined
    const signal = await publishSignal(ctx.publisher.deps, callerOf(req), body)
    req.log.debug({ id: signal.id, seq: signal.seq, origin: signal.origin }, 'signal published')
    return sendJsonText(reply, publishAnswer(signal, ctx.cfg.authority))
  })
}

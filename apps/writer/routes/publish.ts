import type { FastifyInstance } from 'fastify'
import { callerOf, DOOR, sendJsonText } from '../../../libs/shared/http/index.js'
import { metrics } from '../../../libs/shared/metrics/index.js'
import type { WriterContext } from '../context.js'
import { publishAnswer, publishSignal } from '../../../libs/shared/publish/index.js'

/**
 * POST /sw/signals: publish one signal; 200 `{ok:true, signal}` once it is committed. With an
 * Idempotency-Key, a retry within 24 h answers the original signal instead of storing another.
 */
export async function publishRoutes(app: FastifyInstance, { ctx }: { ctx: WriterContext }) {
  app.addHook('onResponse', (_req, reply, done) => {
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

import type { Caller } from '../../libs/shared/caller.js'
import {
  encodeResponse,
  errorBody,
  logFailure,
  responseText,
  retryAfterSeconds,
  STATUS,
  toWireError,
  type FastConnection,
  type FastPath,
  type FastPathRoutes,
  type FastRequest,
} from '../../libs/shared/http/index.js'
import { hotCounts, metrics } from '../../libs/shared/metrics/index.js'
import { publishAnswer, publishSignal } from '../../libs/shared/publish/index.js'
import type { WriterContext } from './context.js'

/** JSON bodies are decoded strictly, as createHttpApp's parser decodes them: a body that is not UTF-8 is fastify's to refuse. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * POST /sw/signals (and /sw/v1/signals) in the fast path: a publish whose head and JSON body arrived
 * whole, through the same publish path as the fastify route (routes/publish.ts), answered with the
 * headers fastify sends (captured from its answer to a body that is not UTF-8, which its parser
 * refuses before the route) and counted in the same metrics. A body that is not UTF-8, an
 * overloaded process (under-pressure sheds in fastify) and shutdown are left to fastify, as is
 * anything request-head.ts does not take (another Content-Type, a body on its way, a chunked one).
 * test/writer/publish-fast-path.test.ts compares the bytes with fastify's.
 */
export function publishFastPath(ctx: WriterContext): FastPathRoutes {
  const { authority, http } = ctx.cfg
  const deps = ctx.publisher.deps
  // every 401 says how to authenticate, as createHttpApp's onSend hook adds it (RFC 6750 §3, RFC 9728 §5.1)
  const challenge = `www-authenticate: Bearer${http.resourceMetadataUrl ? ` resource_metadata="${http.resourceMetadataUrl}"` : ''}\r\n`
  const debug = ctx.log.isLevelEnabled('debug')

  function fail(err: unknown, req: FastRequest, conn: FastConnection, fast: FastPath) {
    const closes = req.close || fast.closing
    const e = toWireError(err)
    logFailure(ctx.log, err, e)
    const status = STATUS[e.code]
    metrics.publishes.inc({ code: String(status) })
    const retryAfter = retryAfterSeconds(e)
    const lines =
      (retryAfter === undefined ? fast.headers.lines : fast.headers.withRetryAfter(retryAfter)) + (status === 401 ? challenge : '')
    conn.respond(encodeResponse(status, lines, Buffer.from(JSON.stringify(errorBody(e))), closes ? null : fast.keepAliveSeconds), closes)
  }

  return {
    method: 'POST',
    paths: ['/sw/signals', '/sw/v1/signals'],
    probe: { method: 'POST', url: '/sw/signals', headers: { 'content-type': 'application/json' }, payload: Buffer.from([0xff]) },
    serve(req, conn, fast) {
      if (fast.overloaded) return false
      let body: string
      try {
        body = utf8.decode(req.body!)
      } catch {
        return false
      }
      const started = performance.now()
      const caller: Caller = {
        address: fast.address(req, conn),
        authorization: req.authorization,
        idempotencyKey: req.idempotencyKey,
        traceparent: req.traceparent,
      }
      publishSignal(deps, caller, body).then(
        (signal) => {
          if (debug) ctx.log.debug({ id: signal.id, seq: signal.seq, origin: signal.origin }, 'signal published')
          const closes = req.close || fast.closing
          const keepAlive = closes ? null : fast.keepAliveSeconds
          const text = publishAnswer(signal, authority)
          conn.respond(
            fast.headers.ascii
              ? responseText(200, fast.headers.lines, text, Buffer.byteLength(text), keepAlive)
              : encodeResponse(200, fast.headers.lines, Buffer.from(text), keepAlive),
            closes,
          )
          hotCounts.published++
          metrics.publishSeconds.observe((performance.now() - started) / 1000)
        },
        (err: unknown) => fail(err, req, conn, fast),
      )
      return true
    },
  }
}

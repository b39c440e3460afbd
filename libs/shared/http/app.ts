import cors from '@fastify/cors'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { invalid, LIMITS, WireError } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { frameworkError, installErrorHandler, sendError } from './errors.js'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Where a board's RFC 9728 protected-resource document lives (served by the reader). */
export const resourceMetadataUrl = (baseUrl: string) => `${baseUrl}/.well-known/oauth-protected-resource`

export interface HttpAppOptions {
  /** The board's RFC 9728 document, named in the `WWW-Authenticate` challenge of every 401. */
  resourceMetadataUrl?: string
}

/**
 * The fastify instance every role starts from: JSON errors everywhere, CORS as docs/protocol.md says,
 * the 64 KiB body cap, and JSON bodies handed to routes as text (publish keeps payloads verbatim;
 * other routes parse with parseJsonBody).
 */
export function createHttpApp(log: Logger, opts: HttpAppOptions = {}): FastifyInstance {
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: LIMITS.maxBodyBytes,
    requestIdHeader: 'x-request-id',
    logController: new LogController({ disableRequestLogging: true }), // one debug line per request instead (onResponse)
    return503OnClosing: false, // our own onRequest hook answers with a JSON 503 instead (below)
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // answered before routing, so without hooks: CORS is set here
    frameworkErrors: (err, req, reply) => {
      const e = frameworkError(err)
      if (e.code === 'internal') req.log.error({ err }, 'request failed')
      return sendError(reply.header('access-control-allow-origin', '*'), e)
    },
  })
  installErrorHandler(app)
  // Shutting down: requests that arrive on kept-alive connections get 503 with `Connection: close`,
  // so clients go to another pod and the connection drains; requests already in flight finish.
  let closing = false
  app.addHook('preClose', async () => void (closing = true))
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing) return
    reply.header('connection', 'close')
    throw new WireError('unavailable', 'this process is shutting down; retry on another', undefined, { retryAfter: 1 })
  })
  // and requests in flight when shutdown began close their connection with their answer, so the
  // server is not left waiting on kept-alive sockets nobody will close
  app.addHook('onSend', async (_req, reply) => void (closing && reply.header('connection', 'close')))
  // every 401 says how to authenticate (RFC 6750 §3, RFC 9728 §5.1), whichever route refused
  const challenge = `Bearer${opts.resourceMetadataUrl ? ` resource_metadata="${opts.resourceMetadataUrl}"` : ''}`
  app.addHook('onSend', async (_req, reply) => void (reply.statusCode === 401 && !reply.hasHeader('www-authenticate') && reply.header('www-authenticate', challenge)))
  app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    exposedHeaders: ['WWW-Authenticate', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    maxAge: 600,
  })
  // JSON only (fastify would also take text/plain), decoded strictly: bytes that are not UTF-8
  // would otherwise become U+FFFD and be stored as something the client never sent
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    let text: string
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      return done(invalid('body is not valid UTF-8'), undefined)
    }
    done(null, text)
  })
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, url: req.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request')
  })
  return app
}

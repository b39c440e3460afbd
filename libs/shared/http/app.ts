import cors from '@fastify/cors'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { LIMITS } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { installErrorHandler } from './errors.js'

/**
 * The fastify instance every role starts from: JSON errors everywhere, CORS as decisions.md says,
 * the 64 KiB body cap, and JSON bodies handed to routes as text (publish keeps payloads verbatim;
 * other routes parse with parseJsonBody).
 */
export function createHttpApp(log: Logger): FastifyInstance {
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: LIMITS.maxBodyBytes,
    requestIdHeader: 'x-request-id',
    logController: new LogController({ disableRequestLogging: true }), // one debug line per request instead (onResponse)
    return503OnClosing: false, // waiting long-polls are answered in preClose; new requests still get JSON
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
  })
  installErrorHandler(app)
  app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    exposedHeaders: ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    maxAge: 600,
  })
  app.removeContentTypeParser(['application/json'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body))
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, url: req.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request')
  })
  return app
}

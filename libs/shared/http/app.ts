import { getHeapStatistics } from 'node:v8'
import cors from '@fastify/cors'
import underPressure from '@fastify/under-pressure'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { invalid, LIMITS, WireError } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { metrics, reportConnections } from '../metrics/index.js'
import fp from 'fastify-plugin'
import { fenceConnections } from './connection-fence.js'
import { frameworkError, installErrorHandler, Overloaded, sendError } from './errors.js'
import { lazyChildLogger } from './lazy-logger.js'
import { installRequestBudget, type RequestBudget } from './request-budget.js'
import { DEFAULT_HTTP, type HttpSettings } from './settings.js'
import { setHttpState, trustFunction, type HttpState } from './state.js'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Where a board's RFC 9728 protected-resource document lives (served by the reader). */
export const resourceMetadataUrl = (baseUrl: string) => `${baseUrl}/.well-known/oauth-protected-resource`

/** Health and metrics answer under pressure too: an orchestrator must not restart a busy process. */
const EXEMPT_FROM_SHEDDING = new Set(['/', '/healthz', '/readyz', '/metrics'])

/** Headers a browser may read from a cross-origin answer (CORS). */
const EXPOSED_HEADERS = ['WWW-Authenticate', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']

/**
 * The fastify instance every role starts from: JSON errors everywhere, CORS as docs/protocol.md says,
 * the 64 KiB body cap, and JSON bodies handed to routes as text (publish keeps payloads verbatim;
 * other routes parse with parseJsonBody). With `budget`, every request no door budgets spends
 * its address's request budget first (request-budget.ts).
 */
export function createHttpApp(log: Logger, http: HttpSettings = DEFAULT_HTTP, budget?: RequestBudget): FastifyInstance {
  const trust = trustFunction(http.trustProxy)
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.connectionTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    // @NOTE node checks the request and headers timeouts on this interval (30 s by default): once a
    // second, so a slow sender is cut close to its timeout
    http: { headersTimeout: http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    trustProxy: trust ?? false,
    bodyLimit: LIMITS.maxBodyBytes,
    requestIdHeader: 'x-request-id',
    logController: new LogController({ disableRequestLogging: true }), // one debug line per request instead (onResponse)
    childLoggerFactory: lazyChildLogger, // req.log's child is made only if the request logs
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
  if (http.maxConnections > 0) app.server.maxConnections = http.maxConnections
  const unreported = reportConnections(app.server)
  app.addHook('onClose', async () => unreported())
  const shedding = http.shedEventLoopDelayMs > 0 || http.shedHeapUsedRatio > 0
  let warnedAt = -Infinity
  const state: HttpState = {
    settings: http,
    trust,
    closing: false,
    overloaded: () => shedding && (app as unknown as { isUnderPressure?: () => boolean }).isUnderPressure?.() === true,
    requestArrived: fenceConnections(app.server, http.headersTimeoutMs),
    forwardedIgnored() {
      if (Date.now() - warnedAt < 3_600_000) return
      warnedAt = Date.now()
      log.warn(
        'requests carry X-Forwarded-For but TRUST_PROXY is off: every client behind the proxy shares its one address budget; set TRUST_PROXY to the number of proxies in front (docs/security.md)',
      )
    },
  }
  setHttpState(app, state)
  // Shutting down: requests that arrive on kept-alive connections get 503 with `Connection: close`,
  // so clients go to another pod and the connection drains; requests already in flight finish.
  // @NOTE every hook here runs on every request, so each is a plain callback (no promise per request)
  app.addHook('preClose', async () => void (state.closing = true))
  app.addHook('onRequest', (req, reply, done) => {
    if (!trust && req.headers['x-forwarded-for'] !== undefined) state.forwardedIgnored()
    if (!state.closing) return done()
    reply.header('connection', 'close')
    done(new WireError('unavailable', 'this process is shutting down; retry on another', undefined, { retryAfter: 1 }))
  })
  // and requests in flight when shutdown began close their connection with their answer, so the
  // server is not left waiting on kept-alive sockets nobody will close; every 401 says how to
  // authenticate (RFC 6750 §3, RFC 9728 §5.1), whichever route refused
  const challenge = `Bearer${http.resourceMetadataUrl ? ` resource_metadata="${http.resourceMetadataUrl}"` : ''}`
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff') // every answer is JSON or a viewer file with its own type: never sniffed
    if (state.closing) reply.header('connection', 'close')
    if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', challenge)
    done(null, payload)
  })
  app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  })
  // after CORS too: a shed request's 503 carries the CORS lines, so a browser client can read its Retry-After
  if (shedding)
    app.register(underPressure, {
      maxEventLoopDelay: http.shedEventLoopDelayMs,
      maxHeapUsedBytes: Math.floor(http.shedHeapUsedRatio * getHeapStatistics().heap_size_limit),
      customError: Overloaded,
      // health and metrics pass (returning nothing lets the request go on)
      pressureHandler: (req) => {
        if (EXEMPT_FROM_SHEDDING.has(req.url.split('?')[0] ?? '')) return
        metrics.refused.inc({ reason: 'overloaded' })
        throw new Overloaded()
      },
    })
  // after CORS, so a refusal carries its headers; at the root, so every route has it
  if (budget) app.register(fp(async (root) => installRequestBudget(root, budget)))
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
  if (log.isLevelEnabled('debug'))
    app.addHook('onResponse', (req, reply, done) => {
      req.log.debug(
        { method: req.method, url: req.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
        'request',
      )
      done()
    })
  return app
}

import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import { Deadlines } from '../../deadlines.js'
import { hotCounts } from '../../metrics/index.js'
import { httpState } from '../state.js'
import { FastConnection, type FastPathHost } from './connection.js'
import type { FastRequest } from './request-head.js'
import { captureHeaders, type CapturedHeaders } from './response.js'

export interface FastPathRoutes {
  /** Exact paths (no trailing slash, no encoding) the fast path answers with GET. */
  paths: string[]
  /**
   * A URL fastify answers at once, without work or budget (a query its door refuses): the headers
   * of that answer are the ones fastify's hooks set, and the fast path sends the same.
   */
  probe: string
  /**
   * Serves `req` on `conn`, calling `conn.respond` once, now or later; or returns false without
   * having answered, and node's server and fastify serve it (and the rest of the connection).
   */
  serve(req: FastRequest, conn: FastConnection, fast: FastPath): boolean
}

/** What a fast-path route needs of the process's HTTP settings and state. */
export interface FastPath {
  /** req.ip as fastify computes it (TRUST_PROXY: X-Forwarded-For through trusted proxies). */
  address(req: FastRequest, conn: FastConnection): string
  /** Shutdown has begun: new requests are fastify's (503), answers close their connection. */
  readonly closing: boolean
  /** The process is overloaded (@fastify/under-pressure would shed): a route admits only its cheap requests. */
  readonly overloaded: boolean
  /** Keep-Alive's timeout in seconds, as node announces it. */
  readonly keepAliveSeconds: number
  /** The header lines fastify's hooks set on the probe's answer (content-type included), captured once listening. */
  readonly headers: CapturedHeaders
}

/**
 * The fast path in front of `app`'s HTTP server for its hottest GET routes (the follow feed's polls
 * and long-polls). Each new connection starts here: a request it serves is parsed by a small linear
 * parser and answered with one socket write of pre-encoded bytes, skipping node's request and
 * response objects and fastify's hooks (at high fan-out these cost more than the answer). The
 * first request it does not serve (another route, a method or header it does not take, a head
 * split over packets) hands the connection, unread bytes included, to node's own connection
 * handling, and fastify serves everything on it from then on. docs/architecture.md, "The fast path".
 *
 * Fenced: a new connection must send a whole request head within HTTP_HEADERS_TIMEOUT_MS (node's
 * headers timeout), counted from its first byte whichever path ends up serving it; writes respect
 * backpressure (connection.ts); HTTP_FAST_PATH=0 leaves every connection to node and fastify.
 */
export function installFastPath(app: FastifyInstance, routes: FastPathRoutes): void {
  const state = httpState(app)
  const settings = state.settings
  if (!settings.fastPath) return
  const server = app.server
  // node's own connection handling is the first listener; createHttpApp's fences come after it and stay
  const [nodeListener] = server.listeners('connection') as Array<(this: typeof server, socket: Socket) => void>
  if (!nodeListener) throw new Error('installFastPath: node http server expected')
  const trust = state.trust
  const open = new Set<FastConnection>()
  const keepAlive = new Deadlines<FastConnection>(1000)
  let headers: CapturedHeaders | null = null // until captured, every connection is fastify's
  const fast: FastPath = {
    address: (req, conn) => {
      if (!trust) {
        if (req.forwardedFor !== undefined) state.forwardedIgnored()
        return conn.remoteAddress
      }
      return proxyAddr({ socket: { remoteAddress: conn.remoteAddress }, headers: { 'x-forwarded-for': req.forwardedFor } } as never, trust)
    },
    get closing() {
      return state.closing
    },
    get overloaded() {
      return state.overloaded()
    },
    keepAliveSeconds: Math.floor(settings.keepAliveTimeoutMs / 1000),
    get headers() {
      return headers!
    },
  }
  const host: FastPathHost = {
    paths: [...routes.paths],
    headed: (conn) => state.requestArrived(conn.socket),
    serve: (req, conn) => headers !== null && !state.closing && routes.serve(req, conn, fast) && (hotCounts.fastPathServed++, true),
    handOver: (socket) => (hotCounts.fastPathHandedOver++, nodeListener.call(server, socket)),
    idle: (conn) => (state.closing ? conn.closeIfIdle() : keepAlive.add(conn, Date.now() + settings.keepAliveTimeoutMs)),
    busy: (conn) => void keepAlive.cancel(conn),
    forget: (conn) => (open.delete(conn), keepAlive.cancel(conn)),
  }
  app.addHook('onListen', async () => {
    headers = await captureHeaders(app, routes.probe)
  })
  server.removeListener('connection', nodeListener)
  server.prependListener('connection', (socket: Socket) => void open.add(new FastConnection(socket, host)))
  // after the answers to waiting long-polls: idle fast-path connections close, so the server can
  app.addHook('preClose', (done) => {
    for (const conn of open) conn.closeIfIdle()
    done()
  })
}

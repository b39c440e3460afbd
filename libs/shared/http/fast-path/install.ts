import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import { Deadlines } from '../../deadlines.js'
import { hotCounts } from '../../metrics/index.js'
import { httpState } from '../state.js'
import { FastConnection, type FastPathHost } from './connection.js'
import type { FastRequest } from './request-head.js'
import { captureHeaders, type CapturedHeaders, type Probe } from './response.js'

export interface FastPathRoutes {
  /** The method `paths` are answered for: GET (the default, no body) or POST (a whole JSON body, request-head.ts). */
  method?: 'GET' | 'POST'
  /** Exact paths (no trailing slash, no encoding) the fast path answers with `method`. */
  paths: string[]
  /**
   * A request fastify answers at once, without work or budget (a query its door refuses, a body its
   * parser refuses): the headers of that answer are the ones fastify's hooks set, and the fast path
   * sends the same. A URL is a GET; it comes from PROBE_ADDRESS.
   */
  probe: Probe
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

/** Each HTTP server's one fast path, to which every role's routes are added (the single process has the reader's and the writer's). */
const installed = new WeakMap<FastifyInstance['server'], { add(route: Route): void }>()

/** A route added to a fast path: its requests are served once its probe's headers are captured. */
interface Route {
  routes: FastPathRoutes
  method: 'GET' | 'POST'
  paths: string[]
  fast: FastPath
  ready(): boolean
}

/**
 * The fast path in front of `app`'s HTTP server for its hottest routes (the follow feed's polls
 * and long-polls, publishes). Each new connection starts here: a request it serves is parsed by a
 * small linear parser and answered with one socket write of pre-encoded bytes, skipping node's
 * request and response objects and fastify's hooks (at high fan-out these cost more than the
 * answer). The first request it does not serve (another route, a method or header it does not
 * take, a head or body split over packets) hands the connection, unread bytes included, to node's
 * own connection handling, and fastify serves everything on it from then on.
 * docs/architecture.md, "The fast path". Called again for the same app, it adds `routes` to it.
 *
 * Fenced: a new connection must send a whole request head within HTTP_HEADERS_TIMEOUT_MS (node's
 * headers timeout), counted from its first byte whichever path ends up serving it; writes respect
 * backpressure (connection.ts); HTTP_FAST_PATH=0 leaves every connection to node and fastify.
 */
export function installFastPath(app: FastifyInstance, routes: FastPathRoutes): void {
  const state = httpState(app)
  const settings = state.settings
  if (!settings.fastPath) return
  let headers: CapturedHeaders | null = null // until captured, every request of the route is fastify's
  const trust = state.trust
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
  app.addHook('onListen', async () => {
    headers = await captureHeaders(app, routes.probe)
  })
  const ready = () => headers !== null
  const entry: Route = { routes, method: routes.method ?? 'GET', paths: [...routes.paths], fast, ready }
  const known = installed.get(app.server)
  if (known) {
    known.add(entry)
    return
  }
  const list = [entry]
  const getPaths: string[] = []
  const postPaths: string[] = []
  const add = (e: Route) => {
    if (e !== entry) list.push(e)
    ;(e.method === 'GET' ? getPaths : postPaths).push(...e.paths)
  }
  add(entry)
  installed.set(app.server, { add })
  const server = app.server
  // node's own connection handling is the first listener; createHttpApp's fences come after it and stay
  const [nodeListener] = server.listeners('connection') as Array<(this: typeof server, socket: Socket) => void>
  if (!nodeListener) throw new Error('installFastPath: node http server expected')
  const open = new Set<FastConnection>()
  const keepAlive = new Deadlines<FastConnection>(1000)
  const route = (req: FastRequest) => {
    for (const e of list) if (e.method === req.method && e.paths.includes(req.path)) return e
    return undefined
  }
  const host: FastPathHost = {
    paths: getPaths,
    postPaths,
    headed: (conn) => state.requestArrived(conn.socket),
    serve: (req, conn) => {
      const e = route(req)
      return e?.ready() === true && !state.closing && e.routes.serve(req, conn, e.fast) && (hotCounts.fastPathServed++, true)
    },
    handOver: (socket) => (hotCounts.fastPathHandedOver++, nodeListener.call(server, socket)),
    idle: (conn) => (state.closing ? conn.closeIfIdle() : keepAlive.add(conn, Date.now() + settings.keepAliveTimeoutMs)),
    busy: (conn) => void keepAlive.cancel(conn),
    forget: (conn) => (open.delete(conn), keepAlive.cancel(conn)),
  }
  server.removeListener('connection', nodeListener)
  server.prependListener('connection', (socket: Socket) => void open.add(new FastConnection(socket, host)))
  // after the answers to waiting long-polls: idle fast-path connections close, so the server can
  app.addHook('preClose', (done) => {
    for (const conn of open) conn.closeIfIdle()
    done()
  })
}

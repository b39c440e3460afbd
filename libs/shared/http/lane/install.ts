import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import { Deadlines } from '../../deadlines.js'
import { hotCounts } from '../../metrics/index.js'
import { httpState } from '../state.js'
import { LaneConnection, type LaneHost } from './connection.js'
import type { LaneRequest } from './request-head.js'

export interface LaneRoutes {
  /** Exact paths (no trailing slash, no encoding) the lane answers with GET. */
  paths: string[]
  /**
   * Serves `req` on `conn`, calling `conn.respond` once, now or later; or returns false without
   * having answered, and node's server and fastify serve it (and the rest of the connection).
   */
  serve(req: LaneRequest, conn: LaneConnection, lane: Lane): boolean
}

/** What a lane route needs of the process's HTTP settings and state. */
export interface Lane {
  /** req.ip as fastify computes it (TRUST_PROXY: X-Forwarded-For through trusted proxies). */
  address(req: LaneRequest, conn: LaneConnection): string
  /** Shutdown has begun: new requests are fastify's (503), answers close their connection. */
  readonly closing: boolean
  /** @fastify/under-pressure would shed a request now. */
  readonly overloaded: boolean
  /** Keep-Alive's timeout in seconds, as node announces it. */
  readonly keepAliveSeconds: number
}

/**
 * A lane in front of `app`'s HTTP server for its hottest GET routes (the follow feed's polls and
 * long-polls). Each new connection starts in the lane: a request it serves is parsed by a small
 * linear parser and answered with one socket write of pre-encoded bytes, skipping node's request and
 * response objects and fastify's hooks (at high fan-out these cost more than the answer). The
 * first request it does not serve (another route, a method or header it does not take, a head split
 * over packets) hands the connection, unread bytes included, to node's own connection handling, and
 * fastify serves everything on it from then on. docs/architecture.md, "The long-poll lane".
 */
export function installLane(app: FastifyInstance, routes: LaneRoutes): Lane {
  const server = app.server
  const state = httpState(app)
  const settings = state.settings
  const [nodeListener] = server.listeners('connection') as Array<(this: typeof server, socket: Socket) => void>
  if (!nodeListener || server.listenerCount('connection') !== 1) throw new Error('installLane: node http server expected')
  const trust = state.trust
  const open = new Set<LaneConnection>()
  const keepAlive = new Deadlines<LaneConnection>(1000)
  const lane: Lane = {
    address: (req, conn) =>
      trust ? proxyAddr({ socket: { remoteAddress: conn.remoteAddress }, headers: { 'x-forwarded-for': req.forwardedFor } } as never, trust) : conn.remoteAddress,
    get closing() {
      return state.closing
    },
    get overloaded() {
      return state.overloaded()
    },
    keepAliveSeconds: Math.floor(settings.keepAliveTimeoutMs / 1000),
  }
  const host: LaneHost = {
    paths: new Set(routes.paths),
    serve: (req, conn) => !state.closing && routes.serve(req, conn, lane) && (hotCounts.laneServed++, true),
    handOver: (socket) => (hotCounts.laneHandedOver++, nodeListener.call(server, socket)),
    idle: (conn) => (state.closing ? conn.closeIfIdle() : keepAlive.add(conn, Date.now() + settings.keepAliveTimeoutMs)),
    busy: (conn) => void keepAlive.cancel(conn),
    forget: (conn) => (open.delete(conn), keepAlive.cancel(conn)),
  }
  server.removeListener('connection', nodeListener)
  server.on('connection', (socket: Socket) => {
    const conn = new LaneConnection(socket, host)
    open.add(conn)
    host.idle(conn)
  })
  // after the answers to waiting long-polls: idle lane connections close, so the server can
  app.addHook('preClose', (done) => {
    for (const conn of open) conn.closeIfIdle()
    done()
  })
  return lane
}

import type { Socket } from 'node:net'
import type { Due } from '../../deadlines.js'
import { MAX_HEAD_BYTES, parseRequestHead, type LaneRequest } from './request-head.js'

/** What a connection needs from its lane (install.ts). */
export interface LaneHost {
  readonly paths: ReadonlySet<string>
  /** Serves `req` (true: it will call `respond` once), or false: node's server takes the connection. */
  serve(req: LaneRequest, conn: LaneConnection): boolean
  /** node's own connection handling, for a connection the lane gives up. */
  handOver(socket: Socket): void
  /** A connection with no request in flight waits this long for its next one (keep-alive). */
  idle(conn: LaneConnection): void
  /** Ends the keep-alive wait (a request arrived, or the connection ended). */
  busy(conn: LaneConnection): void
  forget(conn: LaneConnection): void
}

/**
 * One client connection the lane serves: requests are read from the socket and answered with
 * whole pre-encoded responses, one at a time. It is also the request's `Gone` (feed waiters): it
 * aborts when the client leaves. The first request the lane does not serve gives the connection,
 * with the bytes not yet used, to node's HTTP server for good.
 */
export class LaneConnection implements Due {
  readonly socket: Socket
  private readonly host: LaneHost
  private pending: Buffer | null = null
  private inFlight = false
  /** node's server has the socket now. */
  private given = false
  private listener: { handleEvent(): void } | null = null
  aborted = false
  dueBucket: number | undefined = undefined
  /** The peer's address, read once (each read of socket.remoteAddress is a system call). */
  readonly remoteAddress: string

  constructor(socket: Socket, host: LaneHost) {
    this.socket = socket
    this.host = host
    this.remoteAddress = socket.remoteAddress ?? ''
    socket.on('data', this.onData)
    socket.on('end', this.onGone) // node's server does not keep half-open connections either
    socket.on('close', this.onGone)
    socket.on('error', this.onError)
  }

  get idle() {
    return !this.inFlight && !this.aborted
  }

  /** Writes the answer of the request in flight; `close` ends the connection after it. */
  respond(bytes: Buffer, close: boolean) {
    if (!this.inFlight) return
    this.inFlight = false
    this.listener = null
    if (this.aborted) return
    if (close) {
      this.socket.end(bytes, () => this.socket.destroy()) // as node does: no half-open socket left behind
      return
    }
    this.socket.write(bytes)
    if (this.pending) this.next()
    if (!this.inFlight && !this.aborted && !this.given) this.host.idle(this)
  }

  /** Closes the connection if no request is in flight (shutdown), once what was written has gone out. */
  closeIfIdle() {
    if (this.idle) this.socket.end(() => this.socket.destroy())
  }

  // Gone, for the feed's waiters
  addEventListener(_type: 'abort', listener: { handleEvent(): void }) {
    this.listener = listener
  }
  removeEventListener(_type: 'abort', listener: { handleEvent(): void }) {
    if (this.listener === listener) this.listener = null
  }

  /** The keep-alive wait ran out. */
  expire() {
    if (!this.inFlight) this.socket.destroy()
  }

  private readonly onData = (chunk: Buffer) => {
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk
    if (!this.inFlight) this.next()
    // a client that sends ahead while its long-poll waits may not queue more than a head's worth
    else if (this.pending.length > MAX_HEAD_BYTES) this.socket.destroy()
  }

  private readonly onGone = () => {
    if (this.aborted) return
    this.aborted = true
    this.host.forget(this)
    const l = this.listener
    this.listener = null
    l?.handleEvent()
    if (!this.socket.destroyed) this.socket.destroy()
  }

  private readonly onError = () => {} // 'close' follows

  /** Takes the next request from `pending`: the lane's, or the connection goes to node. */
  private next() {
    const buf = this.pending!
    const req = parseRequestHead(buf, this.host.paths)
    if (!req) return this.giveUp(buf)
    // before serving: an answer written at once may go on to the next request
    this.pending = buf.length > req.length ? buf.subarray(req.length) : null
    this.host.busy(this)
    this.inFlight = true
    let served = false
    try {
      served = this.host.serve(req, this)
    } catch {
      // a route that failed before taking the request: fastify serves it (and reports what fails)
    }
    if (served) return
    this.inFlight = false
    this.giveUp(buf)
  }

  /** node's server takes the socket and `unread` bytes from here on. */
  private giveUp(unread: Buffer) {
    const s = this.socket
    this.given = true
    s.removeListener('data', this.onData)
    s.removeListener('end', this.onGone)
    s.removeListener('close', this.onGone)
    s.removeListener('error', this.onError)
    this.pending = null
    this.host.forget(this)
    s.unshift(unread)
    this.host.handOver(s)
  }
}

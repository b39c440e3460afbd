import type { Socket } from 'node:net'
import type { Due } from '../../deadlines.js'
import { MAX_BODY_BYTES, MAX_HEAD_BYTES, parseRequestHead, type FastRequest } from './request-head.js'

/**
 * Output a connection may have queued and unsent before it is cut off. The fast path takes no new
 * request while a socket's writes back up, so this is reached only by one answer much larger than
 * the socket's buffer written to a peer that stopped reading; one page is at most ~1.7 MB. (An answer
 * written as text counts in characters here, as node counts it: up to 3 bytes each in UTF-8.)
 */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024

/** What a connection needs from its fast path (install.ts). */
export interface FastPathHost {
  /** Paths served for GET, and for POST. */
  readonly paths: readonly string[]
  readonly postPaths: readonly string[]
  /** A whole request head arrived: the connection's first-request deadline is met. */
  headed(conn: FastConnection): void
  /** Serves `req` (true: it will call `respond` once), or false: node's server takes the connection. */
  serve(req: FastRequest, conn: FastConnection): boolean
  /** node's own connection handling, for a connection the fast path gives up. */
  handOver(socket: Socket): void
  /** A connection with no request in flight waits this long for its next one (keep-alive). */
  idle(conn: FastConnection): void
  /** Ends the keep-alive wait (a request arrived, or the connection ended). */
  busy(conn: FastConnection): void
  forget(conn: FastConnection): void
}

/** The connection a socket's listeners belong to: four shared functions rather than four closures per connection. */
const CONN = Symbol('wire.fastConnection')
type Held = Socket & { [CONN]?: FastConnection }
function onData(this: Held, chunk: Buffer) {
  this[CONN]?.data(chunk)
}
function onGone(this: Held) {
  this[CONN]?.gone()
}
function onDrain(this: Held) {
  this[CONN]?.drained()
}
function onError() {} // 'close' follows

/**
 * One client connection the fast path serves: requests are read from the socket and answered with
 * whole pre-encoded responses, one at a time. It is also the request's `Gone` (feed waiters): it
 * aborts when the client leaves. The first request the fast path does not serve gives the
 * connection, with the bytes not yet used, to node's HTTP server for good.
 *
 * Backpressure, as node's server has it: while the socket's writes back up, no new request is
 * taken and the socket is not read; output queued past MAX_QUEUED_BYTES ends the connection.
 */
export class FastConnection implements Due {
  readonly socket: Socket
  private readonly host: FastPathHost
  private pending: Buffer | null = null
  private inFlight = false
  /** Waiting for 'drain' before the next request is taken. */
  private draining = false
  /** node's server has the socket now. */
  private given = false
  private listener: { handleEvent(): void } | null = null
  aborted = false
  dueBucket: number | undefined = undefined
  /** The peer's address, read once (each read of socket.remoteAddress is a system call). */
  readonly remoteAddress: string
  /**
   * What the route keeps for this connection across its requests (the reader: the answer its
   * requests share), so that a request, which waits here while a long-poll does, costs no object of
   * its own. One request is in flight at a time: the next is taken only after `respond`.
   */
  kept: unknown = undefined

  constructor(socket: Socket, host: FastPathHost) {
    this.socket = socket
    this.host = host
    this.remoteAddress = socket.remoteAddress ?? ''
    ;(socket as Held)[CONN] = this
    socket.on('data', onData)
    socket.on('end', onGone) // node's server does not keep half-open connections either
    socket.on('close', onGone)
    socket.on('error', onError)
  }

  get idle() {
    return !this.inFlight && !this.aborted && !this.draining
  }

  /** Writes the answer of the request in flight (text is written as UTF-8); `close` ends the connection after it. */
  respond(bytes: Buffer | string, close: boolean) {
    if (!this.inFlight) return
    this.inFlight = false
    this.listener = null
    if (this.aborted) return
    if (close) {
      this.socket.end(bytes, () => this.socket.destroy()) // as node does: no half-open socket left behind
      return
    }
    if (!this.socket.write(bytes)) {
      if (this.socket.writableLength > MAX_QUEUED_BYTES) return void this.socket.destroy()
      this.draining = true
      this.socket.pause() // the peer does not read: neither do we, until it does
      this.socket.once('drain', onDrain)
      return
    }
    this.afterAnswer()
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

  private afterAnswer() {
    if (this.pending) this.next()
    if (!this.inFlight && !this.aborted && !this.given) this.host.idle(this)
  }

  /** @internal the socket drained (its listener's). */
  drained() {
    this.draining = false
    if (this.aborted) return
    this.socket.resume()
    this.afterAnswer()
  }

  /** @internal bytes arrived (the socket's listener's). */
  data(chunk: Buffer) {
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk
    if (!this.inFlight && !this.draining) this.next()
    // a client that sends ahead while its request waits may not queue more than a request's worth (a head, and a body where POSTs are served)
    else if (this.pending.length > MAX_HEAD_BYTES + (this.host.postPaths.length > 0 ? MAX_BODY_BYTES : 0)) this.socket.destroy()
  }

  /** @internal the peer left (the socket's listeners'). */
  gone() {
    if (this.aborted) return
    this.aborted = true
    this.host.forget(this)
    const l = this.listener
    this.listener = null
    l?.handleEvent()
    if (!this.socket.destroyed) this.socket.destroy()
  }

  /** Takes the next request from `pending`: the fast path's, or the connection goes to node. */
  private next() {
    const buf = this.pending!
    const req = parseRequestHead(buf, this.host.paths, this.host.postPaths)
    if (!req) return this.giveUp(buf)
    this.host.headed(this)
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
    s.removeListener('data', onData)
    s.removeListener('end', onGone)
    s.removeListener('close', onGone)
    s.removeListener('error', onError)
    ;(s as Held)[CONN] = undefined
    this.pending = null
    this.host.forget(this)
    s.unshift(unread)
    this.host.handOver(s)
  }
}

import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Deadlines, type Due } from '../deadlines.js'
import { WireError } from '../domain/index.js'
import { errorBody } from './errors.js'

/**
 * Requests of one connection run at once (HTTP/1.1 pipelining). node's server parses every request
 * of a chunk it reads (64 KiB: a thousand small GETs) before it pauses on backed-up writes, and each
 * answer may be a 1.7 MB page: past this many, the connection's next requests wait their turn, and
 * the socket is not read while any waits.
 */
export const MAX_PIPELINED = 4

/**
 * Requests of one connection parsed and waiting their turn. The one past it is answered 503 with
 * `Connection: close`, and nothing after it runs; everything run before it is answered first.
 * Clients that pipeline at all send a few.
 */
export const MAX_QUEUED = 64

const TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'

class FirstRequest implements Due {
  dueBucket: number | undefined = undefined
  readonly socket: Socket
  readonly arrived: WeakSet<Socket>
  constructor(socket: Socket, arrived: WeakSet<Socket>) {
    this.socket = socket
    this.arrived = arrived
  }
  expire() {
    if (this.arrived.has(this.socket) || this.socket.destroyed) return
    // A stalled event loop runs its timers before it reads the sockets: the head may be waiting,
    // unread, in the kernel since long before its deadline. Decide after the loop's next read.
    setImmediate(timeOut, this)
  }
}

function timeOut(first: FirstRequest) {
  const socket = first.socket
  if (first.arrived.has(socket) || socket.destroyed) return
  // as node answers its own headers timeout; then the connection goes, whatever the peer does
  socket.end(TIMEOUT_ANSWER)
  socket.destroySoon()
}

/**
 * Fences on every connection of `server`, whichever path serves it: a new connection must send a
 * whole request head within `headersTimeoutMs` of connecting, or it is closed (a connection that
 * sends nothing would otherwise be held until the keep-alive timeout); and at most MAX_PIPELINED of
 * its requests run at once, the next MAX_QUEUED wait (Line). Returns `arrived(socket)`, for code
 * that reads request heads below node's server (the fast path) to say a head came.
 */
export function fenceConnections(server: Server, headersTimeoutMs: number): (socket: Socket) => void {
  const arrived = new WeakSet<Socket>()
  const firstRequests = new Deadlines<FirstRequest>(250)
  server.on('connection', (socket: Socket) => firstRequests.add(new FirstRequest(socket, arrived), Date.now() + headersTimeoutMs))

  const [handle] = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>
  if (!handle || server.listenerCount('request') !== 1) throw new Error('fenceConnections: one request listener expected')
  const lines = new WeakMap<Socket, Line>()
  server.removeAllListeners('request')
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    arrived.add(socket)
    if (socket.destroyed) return // the rest of its chunk costs nothing
    let line = lines.get(socket)
    if (!line) lines.set(socket, (line = new Line(socket, (q, r) => handle.call(server, q, r))))
    line.take(req, res)
  })
  return (socket) => void arrived.add(socket)
}

const TOO_MANY = JSON.stringify(
  errorBody(
    new WireError(
      'unavailable',
      `more than ${MAX_PIPELINED + MAX_QUEUED} pipelined requests on one connection: this one and those after it were not run; send them again`,
    ),
  ),
)

/**
 * One connection's requests, in order: MAX_PIPELINED run at once, the next MAX_QUEUED wait, and the
 * socket is not read while any waits; each answer that completes lets the next run, and reading
 * resumes once none waits. node answers pipelined requests in order whenever they run.
 * @NOTE a request is never run without being answered: the one past the queue is answered 503 with
 * `Connection: close` (node ends the connection after writing it, the answers before it first),
 * and the requests after it are neither run nor answered, as HTTP/1.1 has a client send again what
 * a closed connection left unanswered.
 */
class Line {
  private running = 0
  private readonly queued: Array<[IncomingMessage, ServerResponse]> = []
  private refused = false
  private listening = false
  private readonly socket: Socket
  private readonly run: (req: IncomingMessage, res: ServerResponse) => void
  constructor(socket: Socket, run: (req: IncomingMessage, res: ServerResponse) => void) {
    this.socket = socket
    this.run = run
  }

  take(req: IncomingMessage, res: ServerResponse) {
    if (this.refused) return
    if (this.running < MAX_PIPELINED && this.queued.length === 0) return this.start(req, res)
    if (this.queued.length >= MAX_QUEUED) return this.refuse(res)
    if (this.queued.push([req, res]) === 1) this.holdReading()
  }

  /**
   * Stops reading the socket while a request waits. @NOTE node resumes a socket it did not pause
   * (an answered request's IncomingMessage is drained, and that reads on): each resume while one
   * waits is undone in the same tick, before any read. A request whose body is still arriving is
   * the last one parsed, so it runs only once none waits, and its body is read.
   */
  private holdReading() {
    if (!this.listening) {
      this.listening = true
      this.socket.on('resume', () => {
        if (this.queued.length > 0 || this.refused) this.socket.pause()
      })
    }
    this.socket.pause()
  }

  private start(req: IncomingMessage, res: ServerResponse) {
    this.running++
    res.once('close', () => this.done())
    this.run(req, res)
  }

  private done() {
    this.running--
    if (this.socket.destroyed) return void (this.queued.length = 0) // node aborts them
    while (this.running < MAX_PIPELINED && this.queued.length > 0) {
      const [req, res] = this.queued.shift()!
      this.start(req, res)
    }
    if (this.queued.length === 0 && !this.refused && this.listening) this.socket.resume()
  }

  private refuse(res: ServerResponse) {
    this.refused = true
    res.writeHead(503, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(TOO_MANY),
      'access-control-allow-origin': '*',
      connection: 'close',
    })
    res.end(TOO_MANY)
  }
}

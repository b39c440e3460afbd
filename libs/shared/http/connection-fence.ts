import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { Deadlines, type Due } from '../deadlines.js'

/**
 * Requests one connection may have waiting for their answers at once (HTTP/1.1 pipelining). node's
 * server parses every request of a chunk it reads (64 KiB: a thousand small GETs) before it pauses
 * on backed-up writes, and each answer may be a 1.7 MB page: past this many, the connection is
 * cut. Clients that pipeline at all send a few.
 */
export const MAX_PIPELINED = 8

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
 * its requests wait for answers at once. Returns `arrived(socket)`, for code that reads request
 * heads below node's server (the fast path) to say a head came.
 */
export function fenceConnections(server: Server, headersTimeoutMs: number): (socket: Socket) => void {
  const arrived = new WeakSet<Socket>()
  const firstRequests = new Deadlines<FirstRequest>(250)
  server.on('connection', (socket: Socket) => firstRequests.add(new FirstRequest(socket, arrived), Date.now() + headersTimeoutMs))

  const [handle] = server.listeners('request') as Array<(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void>
  if (!handle || server.listenerCount('request') !== 1) throw new Error('fenceConnections: one request listener expected')
  const waiting = new WeakMap<Socket, number>()
  server.removeAllListeners('request')
  server.on('request', (req, res) => {
    const socket = req.socket
    arrived.add(socket)
    if (socket.destroyed) return // cut below: the rest of its chunk costs nothing
    const n = (waiting.get(socket) ?? 0) + 1
    if (n > MAX_PIPELINED) return void socket.destroy()
    waiting.set(socket, n)
    res.once('close', () => waiting.set(socket, (waiting.get(socket) ?? 1) - 1))
    handle.call(server, req, res)
  })
  return (socket) => void arrived.add(socket)
}

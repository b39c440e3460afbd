import { STATUS_CODES } from 'node:http'

// Responses of the lane, byte for byte what node's ServerResponse writes after fastify's send: the
// headers fastify's hooks and the route set, in their order, then node's Date and connection headers.

let second = -1
let date = ''
/** node's Date header value, made once a second as node does. */
function httpDate(): string {
  const now = Math.floor(Date.now() / 1000)
  if (now !== second) ((second = now), (date = new Date(now * 1000).toUTCString()))
  return date
}

/** `name: value\r\n` lines, in order. */
export const headerLines = (headers: Array<[string, string]>) => headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')

/**
 * A whole HTTP/1.1 response: status line, `lines` (from headerLines), content-type and length, Date,
 * and `Connection: keep-alive` with node's Keep-Alive header, or `Connection: close` when
 * `keepAliveSeconds` is null.
 */
export function encodeResponse(status: number, lines: string, type: string, body: Buffer, keepAliveSeconds: number | null): Buffer {
  const connection = keepAliveSeconds === null ? 'Connection: close\r\n' : `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n`
  const head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines}content-type: ${type}\r\ncontent-length: ${body.length}\r\nDate: ${httpDate()}\r\n${connection}\r\n`
  const out = Buffer.allocUnsafe(Buffer.byteLength(head, 'latin1') + body.length)
  const n = out.write(head, 'latin1')
  body.copy(out, n)
  return out
}

const shared = new WeakMap<Buffer, { second: number; bytes: Buffer }>()

/**
 * encodeResponse for a body many responses share (a page a wake-up hands to every waiter): encoded
 * once per second (the Date header) and kept with the body, so each waiter costs one socket write.
 */
export function sharedResponse(status: number, lines: string, type: string, body: Buffer, keepAliveSeconds: number): Buffer {
  const now = Math.floor(Date.now() / 1000)
  const hit = shared.get(body)
  if (hit && hit.second === now) return hit.bytes
  const bytes = encodeResponse(status, lines, type, body, keepAliveSeconds)
  shared.set(body, { second: now, bytes })
  return bytes
}

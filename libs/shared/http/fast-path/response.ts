import type { FastifyInstance } from 'fastify'

/**
 * @NOTE not `import … from 'node:http'`: an ES import of node:http reads every export, and its lazy
 * WebSocket ones load node's bundled undici (some 13 MB of RSS that a process never uses).
 */
const { STATUS_CODES } = process.getBuiltinModule('node:http')

// Responses of the fast path, byte for byte what node's ServerResponse writes after fastify's send: the
// headers fastify's hooks and the route set, in their order, then node's Date and connection headers.

let second = -1
let date = ''
/** node's Date header value, made once a second as node does. */
function httpDate(): string {
  const now = Math.floor(Date.now() / 1000)
  if (now !== second) (second = now), (date = new Date(now * 1000).toUTCString())
  return date
}

/** `name: value\r\n` lines, in order. */
const headerLines = (headers: Array<[string, string]>) => headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')

/** The status line and headers of a response whose body is `length` bytes, up to the blank line. */
function head(status: number, lines: string, length: number, keepAliveSeconds: number | null): string {
  const connection =
    keepAliveSeconds === null ? 'Connection: close\r\n' : `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n`
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines}content-length: ${length}\r\nDate: ${httpDate()}\r\n${connection}\r\n`
}

/**
 * A whole HTTP/1.1 response: status line, `lines` (from headerLines or captureHeaders, content-type
 * included), content-length, Date, and `Connection: keep-alive` with node's Keep-Alive header, or
 * `Connection: close` when `keepAliveSeconds` is null.
 */
export function encodeResponse(status: number, lines: string, body: Buffer, keepAliveSeconds: number | null): Buffer {
  const h = head(status, lines, body.length, keepAliveSeconds)
  const out = Buffer.allocUnsafe(Buffer.byteLength(h, 'latin1') + body.length)
  const n = out.write(h, 'latin1')
  body.copy(out, n)
  return out
}

/**
 * encodeResponse for a body sent once, as text to write as UTF-8 (`bytes`: its length in UTF-8;
 * `lines` ASCII, CapturedHeaders.ascii): node encodes a string into memory of its own that it frees
 * as soon as the write is done (on its stack when small), where a Buffer's memory waits for a
 * garbage collection. Under a read burst those Buffers, two a response, held tens of MB of malloc's
 * heap at a time, which glibc keeps once grown (bench/results/rss-after-load.md).
 */
export function responseText(status: number, lines: string, body: string, bytes: number, keepAliveSeconds: number | null): string {
  return head(status, lines, bytes, keepAliveSeconds) + body
}

const shared = new WeakMap<Buffer, { second: number; bytes: Buffer }>()

/**
 * encodeResponse for a body many responses share (a page a wake-up hands to every waiter): encoded
 * once per second (the Date header) and kept with the body, so each waiter costs one socket write.
 */
export function sharedResponse(status: number, lines: string, body: Buffer, keepAliveSeconds: number): Buffer {
  const now = Math.floor(Date.now() / 1000)
  const hit = shared.get(body)
  if (hit && hit.second === now) return hit.bytes
  const bytes = encodeResponse(status, lines, body, keepAliveSeconds)
  shared.set(body, { second: now, bytes })
  return bytes
}

/**
 * The fast path's probe of a route (captureHeaders): a URL (a GET), or a request with a method,
 * headers and a body. It comes from PROBE_ADDRESS, which no socket has: a route's metrics leave it out.
 */
export type Probe = string | { method: 'POST'; url: string; headers: Record<string, string>; payload: Buffer }
export const PROBE_ADDRESS = 'fast-path-probe'

/** Headers node adds or that follow the body: never captured. */
const NOT_CAPTURED = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'])

/**
 * The header lines fastify sends on its answer to `url` (its hooks' CORS, nosniff, the route's
 * cache-control, content-type), in its order: what the fast path's answers carry too, so the two
 * paths cannot drift. Content-length, Date and the connection headers are the encoder's.
 */
export async function captureHeaders(app: FastifyInstance, probe: Probe): Promise<CapturedHeaders> {
  const res = await app.inject({ ...(typeof probe === 'string' ? { method: 'GET', url: probe } : probe), remoteAddress: PROBE_ADDRESS })
  const pairs: Array<[string, string]> = []
  for (const [name, value] of Object.entries(res.headers)) {
    if (NOT_CAPTURED.has(name) || value === undefined) continue
    for (const v of Array.isArray(value) ? value : [String(value)]) pairs.push([name, v])
  }
  const at = pairs.findIndex(([name]) => name === 'content-type')
  const before = headerLines(at < 0 ? pairs : pairs.slice(0, at))
  const after = at < 0 ? '' : headerLines(pairs.slice(at))
  return {
    lines: before + after,
    ascii: /^[\x00-\x7f]*$/.test(before + after),
    // fastify's error answers set Retry-After before their content type
    withRetryAfter: (seconds) => `${before}retry-after: ${seconds}\r\n${after}`,
  }
}

/** The headers fastify's hooks set, as header lines; with Retry-After where fastify's errors put it. */
export interface CapturedHeaders {
  readonly lines: string
  /** `lines` are ASCII, so a response's head may be written as UTF-8 with its body (responseText); node writes headers as Latin-1. */
  readonly ascii: boolean
  withRetryAfter(seconds: number): string
}

import { type Readable, Transform } from 'node:stream'
import type { Dispatcher } from 'undici'
import { LIMITS, WireError } from '../../libs/shared/domain/index.js'
import { readUpTo } from './outbound/read-up-to.js'

/** Request headers a board needs; the rest (cookies, hop-by-hop, Host) stay here. */
const FORWARD = ['authorization', 'content-type', 'accept', 'idempotency-key', 'user-agent', 'x-request-id']

/** The headers a proxied request carries to the board: FORWARD's, and X-Forwarded-For with the client's address appended. */
export function forwardHeaders(h: Record<string, string | string[] | undefined>, clientAddress: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of FORWARD) {
    const v = h[k]
    if (typeof v === 'string') out[k] = v
  }
  const xff = h['x-forwarded-for']
  out['x-forwarded-for'] = typeof xff === 'string' ? `${xff}, ${clientAddress}` : clientAddress
  return out
}

/** Response headers that describe this hop, not the board's answer (CORS is the aggregator's own; cookies never cross). */
const DROP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'trailer',
  'date',
  'set-cookie',
  'set-cookie2',
  'content-disposition',
  'x-content-type-options',
])

/**
 * The board's own top-level paths (a direct server's, outside `/sw`): under `/sw/{authority}` they
 * pass as they are. Any other path is the reference platform's public form, `/sw/{authority}/signals`
 * meaning the board's `/sw/signals`.
 */
const BOARD_TOP_LEVEL = new Set(['', 'sw', '.well-known', 'mcp', 'view', 'auth.md', 'healthz', 'readyz', 'metrics'])

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i

/** The viewer's page: the one non-JSON answer a browser shows rather than downloads (its scripts run in the sandbox). */
const isViewerPage = (path: string) => path === '/view' || path === '/view/'

/**
 * What follows `/sw/{authority}` as the board's path and query: refused (400) when a segment is a
 * dot segment once decoded (`..`, `%2e%2e`, `.%2E`), since the URL parser would resolve it out of
 * the board's registered base path (an encoded slash stays inside its segment: a `sw://` URI as an
 * id is one); a reference-form path gets the board's `/sw` prefix.
 */
export function boardPath(rest: string): string {
  const q = rest.indexOf('?')
  const path = q < 0 ? rest : rest.slice(0, q)
  const segments = path.split('/').slice(1) // rest is '' or starts with '/'
  for (const seg of segments) {
    let d: string
    try {
      d = decodeURIComponent(seg)
    } catch {
      throw new WireError('invalid_request', 'the path is not valid percent-encoding')
    }
    if (d === '.' || d === '..') throw new WireError('invalid_request', 'the path leaves the board (a dot segment)')
  }
  const first = segments[0] ?? ''
  return BOARD_TOP_LEVEL.has(first) ? rest : `/sw${rest}`
}

/**
 * The board's answer headers as the aggregator sends them: hop headers, CORS and cookies dropped;
 * `nosniff` on every answer; anything not JSON sandboxed (`Content-Security-Policy: sandbox`, the
 * board's own policy kept beside it, so both apply) and served as a download, so a registrant's
 * page cannot run script or set state on the aggregator's origin. The viewer's page is shown, with
 * `sandbox allow-scripts`: its scripts run at an opaque origin (no access to the aggregator's
 * cookies or storage) and read the board through the proxy with CORS, as any other site could.
 */
export function answerHeaders(h: Dispatcher.ResponseData['headers'], path: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !DROP.has(k) && !k.startsWith('access-control-')) out[k] = v
  out['x-content-type-options'] = 'nosniff'
  const type = out['content-type']
  if (typeof type === 'string' && JSON_TYPE.test(type)) return out
  const own = out['content-security-policy']
  const viewer = isViewerPage(path.split('?')[0]!)
  const sandbox = viewer ? 'sandbox allow-scripts' : 'sandbox'
  out['content-security-policy'] = own === undefined ? sandbox : [...(Array.isArray(own) ? own : [own]), sandbox]
  if (!viewer) out['content-disposition'] = 'attachment'
  return out
}

/** A pass-through that counts the bytes and fails once there are more than `max`: a proxied answer cut there. */
export function capped(max: number): Transform {
  let size = 0
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length
      if (size > max) return cb(new WireError('unavailable', `the board's answer is larger than ${max} bytes`))
      cb(null, chunk)
    },
  })
}

/** A shared long-poll's answer read whole, up to `max` bytes (503 past it). */
export async function readAll(body: Readable, max: number): Promise<Buffer> {
  const all = await readUpTo(body, max)
  if (all) return all
  throw new WireError('unavailable', `the board's answer is larger than ${max} bytes`, undefined, { retryAfter: 1, overload: true })
}

/**
 * The `wait` a query asks for, in seconds (0 when none, or not a number), as the app's long-poll
 * hook reads it. A value that does not decode (a broken percent escape) is no wait here: the board
 * refuses it as it would refuse it directly.
 */
export function waitSeconds(query: string): number {
  const m = /(?:^|[?&])wait=([^&]{1,32})/.exec(query)
  if (!m) return 0
  let v: number
  try {
    v = Number(decodeURIComponent(m[1]!.replace(/\+/g, ' ')).trim())
  } catch {
    return 0
  }
  return Number.isFinite(v) && v > 0 ? Math.min(v, LIMITS.maxWaitSeconds) : 0
}

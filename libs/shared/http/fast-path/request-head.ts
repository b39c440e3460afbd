/** A request the fast path serves: a plain HTTP/1.1 GET of one of its paths, with no body. */
export interface FastRequest {
  /** Bytes of the head (request line to blank line): what the request took from the connection. */
  readonly length: number
  /** One of the fast path's own path strings (the request's bytes are compared, not copied). */
  readonly path: string
  /** After `?`, undecoded ('' when none). */
  readonly query: string
  readonly authorization: string | undefined
  /** X-Forwarded-For, repeated headers joined with ", " as node joins them. */
  readonly forwardedFor: string | undefined
  /** The client asked for `Connection: close`. */
  readonly close: boolean
}

/** Not the fast path's: node's HTTP server (and fastify) take the connection from here. */
export const NOT_MINE = null
/** node's default --max-http-header-size: a longer head is node's to refuse. */
export const MAX_HEAD_BYTES = 16 * 1024

const CR = 0x0d
const LF = 0x0a
const HEAD_END = Buffer.from('\r\n\r\n')
const GET = Buffer.from('GET ')
const VERSION = Buffer.from(' HTTP/1.1')

/** RFC 9110 tchar: what a header name may hold. */
const TCHAR = new Uint8Array(128)
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1

/** `buf[from, to)` is `name` (lower-case ASCII), ignoring case. Header names are tchars, so `| 0x20` only folds letters. */
function nameIs(buf: Buffer, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false
  for (let i = 0; i < name.length; i++) if ((buf[from + i]! | 0x20) !== name.charCodeAt(i)) return false
  return true
}

/**
 * The comma-separated tokens of a Connection value (RFC 9110 §7.6.1), lower-cased and trimmed: the
 * whole token decides, never a substring (`Connection: xclose` asks for nothing).
 */
function connectionTokens(value: string): { close: boolean; upgrade: boolean } {
  let close = false
  let upgrade = false
  for (const raw of value.split(',')) {
    const token = raw.trim().toLowerCase()
    if (token === 'close') close = true
    else if (token === 'upgrade') upgrade = true
  }
  return { close, upgrade }
}

/**
 * A request-target the fast path takes: printable ASCII without spaces, and without `#` or `;` (which
 * the router may treat as delimiters): anything odd is node's and fastify's to judge.
 */
function plainTarget(buf: Buffer, from: number, to: number): boolean {
  if (buf[from] !== 0x2f) return false // origin-form: starts with "/"
  for (let i = from; i < to; i++) {
    const c = buf[i]!
    if (c <= 0x20 || c >= 0x7f || c === 0x23 || c === 0x3b) return false
  }
  return true
}

/** The entry of `paths` that `buf[from, to)` spells exactly, if any. */
function knownPath(buf: Buffer, from: number, to: number, paths: readonly string[]): string | undefined {
  next: for (const p of paths) {
    if (p.length !== to - from) continue
    for (let i = 0; i < p.length; i++) if (buf[from + i] !== p.charCodeAt(i)) continue next
    return p
  }
  return undefined
}

/** A field value without control characters (HTAB and obs-text allowed, as node allows them). */
function plainValue(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = buf[i]!
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return false
  }
  return true
}

/**
 * The request at the start of `buf`, if it is one the fast path serves: `GET <path>[?query] HTTP/1.1`
 * with `path` in `paths`, exactly one Host, at most one Authorization, and nothing that announces a
 * body or a protocol change (Content-Length, Transfer-Encoding, Expect, Upgrade). Anything else,
 * including a head not complete in `buf`, is NOT_MINE: node's server parses it with its own rules.
 * One linear pass over at most MAX_HEAD_BYTES; no regular expressions.
 */
export function parseRequestHead(buf: Buffer, paths: readonly string[]): FastRequest | typeof NOT_MINE {
  const end = buf.indexOf(HEAD_END)
  if (end < 0 || end + 4 > MAX_HEAD_BYTES) return NOT_MINE
  if (buf.compare(GET, 0, GET.length, 0, GET.length) !== 0) return NOT_MINE
  const lineEnd = buf.indexOf(CR)
  const targetEnd = lineEnd - VERSION.length
  if (targetEnd <= GET.length || buf[lineEnd + 1] !== LF) return NOT_MINE
  if (buf.compare(VERSION, 0, VERSION.length, targetEnd, lineEnd) !== 0) return NOT_MINE
  if (!plainTarget(buf, GET.length, targetEnd)) return NOT_MINE
  let pathEnd = GET.length
  while (pathEnd < targetEnd && buf[pathEnd] !== 0x3f) pathEnd++ // up to "?"
  const path = knownPath(buf, GET.length, pathEnd, paths)
  if (path === undefined) return NOT_MINE

  let hosts = 0
  let authorization: string | undefined
  let forwardedFor: string | undefined
  let close = false
  for (let at = lineEnd + 2; at < end + 2; ) {
    const eol = buf.indexOf(CR, at)
    if (eol < 0 || eol > end || buf[eol + 1] !== LF) return NOT_MINE
    let colon = at
    while (colon < eol && buf[colon]! < 128 && TCHAR[buf[colon]!]) colon++
    if (colon === at || colon === eol || buf[colon] !== 0x3a) return NOT_MINE // no name, or a space before ":"
    let v = colon + 1
    let ve = eol
    while (v < ve && (buf[v] === 0x20 || buf[v] === 0x09)) v++
    while (ve > v && (buf[ve - 1] === 0x20 || buf[ve - 1] === 0x09)) ve--
    if (!plainValue(buf, v, ve)) return NOT_MINE
    if (nameIs(buf, at, colon, 'host')) hosts++
    else if (nameIs(buf, at, colon, 'authorization')) {
      if (authorization !== undefined) return NOT_MINE
      authorization = buf.toString('latin1', v, ve)
    } else if (nameIs(buf, at, colon, 'x-forwarded-for')) {
      const value = buf.toString('latin1', v, ve)
      forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`
    } else if (nameIs(buf, at, colon, 'connection')) {
      const tokens = connectionTokens(buf.toString('latin1', v, ve))
      if (tokens.upgrade) return NOT_MINE
      if (tokens.close) close = true
    } else if (
      nameIs(buf, at, colon, 'content-length') ||
      nameIs(buf, at, colon, 'transfer-encoding') ||
      nameIs(buf, at, colon, 'expect') ||
      nameIs(buf, at, colon, 'upgrade')
    )
      return NOT_MINE
    at = eol + 2
  }
  if (hosts !== 1) return NOT_MINE
  const query = pathEnd < targetEnd ? buf.toString('latin1', pathEnd + 1, targetEnd) : ''
  return { length: end + 4, path, query, authorization, forwardedFor, close }
}

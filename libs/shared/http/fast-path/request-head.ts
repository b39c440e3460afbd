import { LIMITS } from '../../domain/index.js'

/** A request the fast path serves: a plain HTTP/1.1 GET of one of its paths with no body, or a POST of one with a whole JSON body. */
export interface FastRequest {
  readonly method: 'GET' | 'POST'
  /** Bytes of the head (request line to blank line) and the body: what the request took from the connection. */
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
  /** POST: the body's bytes (Content-Length of them, all arrived), a view of the connection's buffer; GET: undefined. */
  readonly body: Buffer | undefined
  /** POST: Idempotency-Key and traceparent as sent (at most one of each). */
  readonly idempotencyKey: string | undefined
  readonly traceparent: string | undefined
}

/** Not the fast path's: node's HTTP server (and fastify) take the connection from here. */
export const NOT_MINE = null
/** node's default --max-http-header-size: a longer head is node's to refuse. */
export const MAX_HEAD_BYTES = 16 * 1024

const CR = 0x0d
const LF = 0x0a
// @NOTE past the search for the head's end (one call of indexOf over the whole head), the head's
// parts are compared and searched in JavaScript, byte by byte, against byte arrays: a Buffer method
// (compare, indexOf) is a call into C++ that costs more than the few bytes of a line it looks at, and
// a loop over a string's `charCodeAt` makes optimised code look the method up generically once the
// function has met strings of several representations (bench/results/instructions-39-publish.md)
const HEAD_END = Buffer.from('\r\n\r\n')
const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))
const GET = ascii('GET ')
const POST = ascii('POST ')
/** fastify's bodyLimit (createHttpApp): a longer body is fastify's to refuse (413). */
export const MAX_BODY_BYTES = LIMITS.maxBodyBytes
const VERSION = ascii(' HTTP/1.1')
const HOST = ascii('host')
const AUTHORIZATION = ascii('authorization')
const FORWARDED_FOR = ascii('x-forwarded-for')
const CONNECTION = ascii('connection')
const CONTENT_LENGTH = ascii('content-length')
const CONTENT_TYPE = ascii('content-type')
const IDEMPOTENCY_KEY = ascii('idempotency-key')
const TRACEPARENT = ascii('traceparent')
const TRANSFER_ENCODING = ascii('transfer-encoding')
const EXPECT = ascii('expect')
const UPGRADE = ascii('upgrade')

/** `buf[at, at + bytes.length)` is `bytes`. */
function bytesAt(buf: Buffer, at: number, bytes: Uint8Array): boolean {
  if (at < 0 || at + bytes.length > buf.length) return false
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false
  return true
}

/** `buf[from, to)` is exactly `bytes`. */
const spells = (buf: Buffer, from: number, to: number, bytes: Uint8Array) => to - from === bytes.length && bytesAt(buf, from, bytes)

/** The first CR at or after `from` and before `to`, or -1. */
function crFrom(buf: Buffer, from: number, to: number): number {
  for (let i = from; i < to; i++) if (buf[i] === CR) return i
  return -1
}

/** RFC 9110 tchar: what a header name may hold. */
const TCHAR = new Uint8Array(128)
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1

/** `buf[from, to)` is `name` (lower-case ASCII), ignoring case. Header names are tchars, so `| 0x20` only folds letters. */
function nameIs(buf: Buffer, from: number, to: number, name: Uint8Array): boolean {
  if (to - from !== name.length) return false
  for (let i = 0; i < name.length; i++) if ((buf[from + i]! | 0x20) !== name[i]) return false
  return true
}

const KEEP_ALIVE = Object.freeze({ close: false, upgrade: false })

/**
 * The comma-separated tokens of a Connection value (RFC 9110 §7.6.1), lower-cased and trimmed: the
 * whole token decides, never a substring (`Connection: xclose` asks for nothing).
 */
function connectionTokens(value: string): { close: boolean; upgrade: boolean } {
  if (value === 'keep-alive') return KEEP_ALIVE // what most clients send, on every request
  let close = false
  let upgrade = false
  for (const raw of value.split(',')) {
    const token = raw.trim().toLowerCase()
    if (token === 'close') close = true
    else if (token === 'upgrade') upgrade = true
  }
  return { close, upgrade }
}

const JSON_TYPE = ascii('application/json')
const JSON_UTF8_TYPE = ascii('application/json; charset=utf-8')

/**
 * A Content-Type the fast path takes for a JSON body, `buf[from, to)`: `application/json`, alone or
 * with `charset=utf-8`, in lower case as clients send it (any other spelling is fastify's to judge).
 */
const jsonType = (buf: Buffer, from: number, to: number) => spells(buf, from, to, JSON_TYPE) || spells(buf, from, to, JSON_UTF8_TYPE)

/** A Content-Length of plain digits within MAX_BODY_BYTES, or -1. */
function bodyLength(buf: Buffer, from: number, to: number): number {
  if (to - from < 1 || to - from > 6) return -1
  let n = 0
  for (let i = from; i < to; i++) {
    const c = buf[i]! - 0x30
    if (c < 0 || c > 9) return -1
    n = n * 10 + c
  }
  return n <= MAX_BODY_BYTES ? n : -1
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

/** The bytes of the fast path's paths (a few, from its routes: never a request's), made once each. */
const pathBytes = new Map<string, Uint8Array>()
const bytesOfPath = (p: string) => pathBytes.get(p) ?? pathBytes.set(p, ascii(p)).get(p)!

/** The entry of `paths` that `buf[from, to)` spells exactly, if any. */
function knownPath(buf: Buffer, from: number, to: number, paths: readonly string[]): string | undefined {
  for (const p of paths) if (spells(buf, from, to, bytesOfPath(p))) return p
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
 * with `path` in `paths`, or `POST <path> HTTP/1.1` with `path` in `postPaths`, exactly one Host, at
 * most one Authorization, and nothing that announces a protocol change or a body other than a POST's
 * (Transfer-Encoding, Expect, Upgrade; a GET's Content-Length). A POST has exactly one Content-Length
 * (plain digits, 1 to MAX_BODY_BYTES), exactly one JSON Content-Type (jsonType), at most one
 * Idempotency-Key and traceparent, and its whole body in `buf`. Anything else, including a head or
 * body not complete in `buf`, is NOT_MINE: node's server parses it with its own rules. One linear
 * pass over at most MAX_HEAD_BYTES; no regular expressions.
 */
export function parseRequestHead(buf: Buffer, paths: readonly string[], postPaths: readonly string[] = []): FastRequest | typeof NOT_MINE {
  const end = buf.indexOf(HEAD_END)
  if (end < 0 || end + 4 > MAX_HEAD_BYTES) return NOT_MINE
  const method = bytesAt(buf, 0, GET) ? 'GET' : postPaths.length > 0 && bytesAt(buf, 0, POST) ? 'POST' : null
  if (method === null) return NOT_MINE
  const start = method === 'GET' ? GET.length : POST.length
  const lineEnd = crFrom(buf, 0, end + 1)
  const targetEnd = lineEnd - VERSION.length
  if (targetEnd <= start || buf[lineEnd + 1] !== LF) return NOT_MINE
  if (!bytesAt(buf, targetEnd, VERSION)) return NOT_MINE
  if (!plainTarget(buf, start, targetEnd)) return NOT_MINE
  let pathEnd = start
  while (pathEnd < targetEnd && buf[pathEnd] !== 0x3f) pathEnd++ // up to "?"
  if (method === 'POST' && pathEnd !== targetEnd) return NOT_MINE // a POST with a query is fastify's
  const path = knownPath(buf, start, pathEnd, method === 'GET' ? paths : postPaths)
  if (path === undefined) return NOT_MINE

  let hosts = 0
  let authorization: string | undefined
  let forwardedFor: string | undefined
  let close = false
  let length = -1
  let types = 0
  let idempotencyKey: string | undefined
  let traceparent: string | undefined
  for (let at = lineEnd + 2; at < end + 2; ) {
    const eol = crFrom(buf, at, end + 1)
    if (eol < 0 || buf[eol + 1] !== LF) return NOT_MINE
    let colon = at
    while (colon < eol && buf[colon]! < 128 && TCHAR[buf[colon]!]) colon++
    if (colon === at || colon === eol || buf[colon] !== 0x3a) return NOT_MINE // no name, or a space before ":"
    let v = colon + 1
    let ve = eol
    while (v < ve && (buf[v] === 0x20 || buf[v] === 0x09)) v++
    while (ve > v && (buf[ve - 1] === 0x20 || buf[ve - 1] === 0x09)) ve--
    if (!plainValue(buf, v, ve)) return NOT_MINE
    if (nameIs(buf, at, colon, HOST)) hosts++
    else if (nameIs(buf, at, colon, AUTHORIZATION)) {
      if (authorization !== undefined) return NOT_MINE
      authorization = buf.toString('latin1', v, ve)
    } else if (nameIs(buf, at, colon, FORWARDED_FOR)) {
      const value = buf.toString('latin1', v, ve)
      forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`
    } else if (nameIs(buf, at, colon, CONNECTION)) {
      const tokens = connectionTokens(buf.toString('latin1', v, ve))
      if (tokens.upgrade) return NOT_MINE
      if (tokens.close) close = true
    } else if (nameIs(buf, at, colon, CONTENT_LENGTH)) {
      if (method === 'GET' || length >= 0) return NOT_MINE
      if ((length = bodyLength(buf, v, ve)) < 1) return NOT_MINE // an empty body is fastify's to refuse
    } else if (nameIs(buf, at, colon, CONTENT_TYPE)) {
      if (method === 'POST' && (types++ > 0 || !jsonType(buf, v, ve))) return NOT_MINE
    } else if (method === 'POST' && nameIs(buf, at, colon, IDEMPOTENCY_KEY)) {
      if (idempotencyKey !== undefined) return NOT_MINE
      idempotencyKey = buf.toString('latin1', v, ve)
    } else if (method === 'POST' && nameIs(buf, at, colon, TRACEPARENT)) {
      if (traceparent !== undefined) return NOT_MINE
      traceparent = buf.toString('latin1', v, ve)
    } else if (nameIs(buf, at, colon, TRANSFER_ENCODING) || nameIs(buf, at, colon, EXPECT) || nameIs(buf, at, colon, UPGRADE))
      return NOT_MINE
    at = eol + 2
  }
  if (hosts !== 1) return NOT_MINE
  if (method === 'GET') {
    const query = pathEnd < targetEnd ? buf.toString('latin1', pathEnd + 1, targetEnd) : ''
    return { method, length: end + 4, path, query, authorization, forwardedFor, close, body: undefined, idempotencyKey, traceparent }
  }
  // a POST: a JSON body whose bytes have all arrived (a body still on its way goes to node with the connection)
  if (length < 0 || types !== 1 || buf.length < end + 4 + length) return NOT_MINE
  const body = buf.subarray(end + 4, end + 4 + length)
  return { method, length: end + 4 + length, path, query: '', authorization, forwardedFor, close, body, idempotencyKey, traceparent }
}

import { errorFromResponse, WireError } from './errors.js'
import { deadline } from './timing.js'

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  query?: URLSearchParams
  body?: unknown
  token?: string | undefined
  headers?: Record<string, string>
  signal?: AbortSignal | undefined
  timeoutMs?: number
  /** Most bytes of the answer's body to read, counted after decoding (gzip included); past it the read stops with `payload_too_large`. */
  maxBytes?: number
  /** How a successful answer's bytes become its value (default: the decoded text through `JSON.parse`); what it throws is `internal`, as for an answer that is not JSON. */
  parse?: (body: Uint8Array) => unknown
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

/**
 * One HTTP exchange with one base URL: JSON in, JSON out, any failure a WireError. No retries here;
 * the follower decides when to try again and where.
 */
export async function call<T>(fetchFn: FetchLike, base: string, path: string, o: CallOptions = {}): Promise<T> {
  const url = base + path + (o.query && o.query.toString() !== '' ? `?${o.query}` : '')
  const headers: Record<string, string> = { accept: 'application/json', ...o.headers }
  if (o.token) headers.authorization = `Bearer ${o.token}`
  if (o.body !== undefined) headers['content-type'] = 'application/json'
  const d = deadline(o.signal, o.timeoutMs ?? 30_000)
  try {
    const init: RequestInit = { method: o.method ?? 'GET', headers, signal: d.signal }
    if (o.body !== undefined) init.body = JSON.stringify(o.body)
    const res = await fetchFn(url, init)
    const bytes = o.maxBytes === undefined ? new Uint8Array(await res.arrayBuffer()) : await readCapped(res, o.maxBytes, url)
    let body: unknown = null
    try {
      if (res.ok && o.parse) body = o.parse(bytes)
      else body = bytes.byteLength === 0 ? null : JSON.parse(new TextDecoder().decode(bytes))
    } catch {
      if (res.ok) throw new WireError('internal', res.status, `${url}: the answer is not JSON`)
    }
    if (!res.ok) throw errorFromResponse(res.status, body, res.headers.get('retry-after'))
    return body as T
  } catch (err) {
    if (err instanceof WireError) throw err
    if (o.signal?.aborted) throw o.signal.reason ?? err
    // no answer: refused, reset, DNS, or our own deadline
    throw new WireError(
      'unavailable',
      0,
      `${url}: ${d.signal.aborted ? String((d.signal.reason as Error)?.message ?? 'timed out') : (err as Error).message}`,
      undefined,
      { cause: err },
    )
  } finally {
    d.dispose()
  }
}

/**
 * The body's bytes, reading at most `max` of them as they are decoded: a page of 150 MB, or a small
 * gzip answer that inflates to that, stops at the cap instead of being held whole.
 */
async function readCapped(res: Response, max: number, url: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'))
  const tooLarge = () => new WireError('payload_too_large', res.status, `${url}: the answer is larger than ${max} bytes`, { maxBytes: max })
  if (declared > max && res.headers.get('content-encoding') === null) {
    await res.body?.cancel().catch(() => {})
    throw tooLarge()
  }
  if (!res.body) return new Uint8Array(0)
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const c of chunks) all.set(c, at), (at += c.byteLength)
  return all
}

/** Read parameters → a query string, repeating `tag` for several tags. */
export function toQuery(params: object): URLSearchParams {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue
    if (Array.isArray(v)) for (const item of v) q.append(k, String(item))
    else if (typeof v === 'boolean') {
      if (v) q.set(k, '1')
    } else q.set(k, String(v))
  }
  return q
}

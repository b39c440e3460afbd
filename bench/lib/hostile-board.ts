import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createGzip } from 'node:zlib'

// A board run by an attacker: a small real HTTP server that answers /.well-known/wire as a Wire
// board does (so it registers), then misbehaves on the feed, by-id reads or anything proxied.
// The aggregator's tests (test/aggregator) and its attack benchmark (bench/aggregator-attack.ts)
// both run it.

export type Misbehaviour =
  /** A feed page of `hugeBytes` plain bytes (streamed, never valid JSON). */
  | 'huge'
  /** A feed page of a few hundred KB of gzip that inflates to `hugeBytes`. */
  | 'gzip'
  /** Full pages of valid pinned signals at every cursor, as fast as asked. */
  | 'pinned'
  /** Signals with a payload past the protocol's 16 KiB (a page still within the page cap). */
  | 'oversized'
  /** Signals whose uri names another board, and ones with expiresAt in 2099. */
  | 'foreign'
  /** Headers at once, then one byte every `trickleMs`, never ending. */
  | 'trickle'
  /** A valid, quiet feed; any other path is an HTML page with a cookie and a permissive CSP. */
  | 'html'
  /** A feed page's first `stallBytes` (JSON white space after `{"signals":[`), then nothing, never ending. */
  | 'stall'

export interface HostileBoard {
  url: string
  authority: string
  /** Feed requests answered so far. */
  pages: number
  /** Those that came from the aggregator's follower (no X-Forwarded-For: not proxied for a client). */
  followed: number
  /** Requests in progress. */
  open: number
  /** Every path asked for, as it arrived (the last 1,000). */
  paths: string[]
  /** Answers the client closed before they ended. */
  cut: number
  /** Stops it now (also done at teardown). */
  close(): Promise<void>
}

/** Where a board is torn down: a tap test, or a benchmark's list of steps. */
export interface Teardown {
  teardown(step: () => unknown): void
}

const id = (n: number) => `H${String(n).padStart(19, '0')}`

function signal(authority: string, n: number, over: Record<string, unknown> = {}) {
  const now = Date.now()
  return {
    id: id(n),
    uri: `sw://${authority}/signals/${id(n)}`,
    origin: 'fp_hostile',
    originName: null,
    originUri: `sw://${authority}/identities/fp_hostile`,
    originVerified: false,
    type: 'broadcast',
    tags: ['flood'],
    payload: { text: 'x'.repeat(15_000) },
    ttl: 3600,
    boostBits: 0,
    pinned: false,
    refId: null,
    refUri: null,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 3_600_000).toISOString(),
    ...over,
  }
}

/** Streams `total` bytes of `fill` to `out` (respecting back-pressure), then ends it. */
function stream(out: NodeJS.WritableStream, total: number, done: () => void) {
  const chunk = Buffer.alloc(64 * 1024, ' ')
  let left = total
  const more = () => {
    while (left > 0) {
      const n = Math.min(left, chunk.length)
      left -= n
      if (!out.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void out.once('drain', more)
    }
    done()
  }
  more()
}

export interface HostileOptions {
  hugeBytes?: number
  trickleMs?: number
  stallBytes?: number
  authority?: string
}

export async function startHostileBoard(t: Teardown, mode: Misbehaviour, o: HostileOptions = {}): Promise<HostileBoard> {
  const hugeBytes = o.hugeBytes ?? 150 * 1024 * 1024
  const state: HostileBoard = { url: '', authority: '', pages: 0, followed: 0, open: 0, paths: [], cut: 0, close: async () => {} }
  const sockets = new Set<import('node:net').Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const json = (res: ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  const feed = (req: IncomingMessage, res: ServerResponse) => {
    state.pages++
    if (req.headers['x-forwarded-for'] === undefined) state.followed++
    const q = new URL(req.url!, 'http://x').searchParams
    const cursor = Number(q.get('cursor') ?? 0)
    const limit = Math.min(100, Number(q.get('limit') ?? 100))
    const serverNow = new Date().toISOString()
    if (mode === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"signals":[')
      return stream(res, hugeBytes, () => res.end())
    }
    if (mode === 'gzip') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      const gz = createGzip({ level: 1 })
      gz.pipe(res)
      gz.write('{"signals":[')
      return stream(gz, hugeBytes, () => gz.end())
    }
    if (mode === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json' })
      return void res.write(`{"signals":[${' '.repeat(o.stallBytes ?? 40_000)}`)
    }
    if (mode === 'trickle' || mode === 'html') return json(res, { signals: [], nextCursor: cursor, serverNow })
    const signals = Array.from({ length: limit }, (_, i) => {
      const n = cursor + i + 1
      if (mode === 'pinned') return signal(state.authority, n, { pinned: true })
      if (mode === 'oversized') return signal(state.authority, n, { payload: { text: 'y'.repeat(18_000) } })
      // foreign: half name another board, half claim to live until 2099
      return n % 2
        ? signal(state.authority, n, { uri: `sw://victim.example/signals/${id(n)}` })
        : signal(state.authority, n, { payload: { text: 'long' }, expiresAt: '2099-01-01T00:00:00.000Z' })
    })
    json(res, { signals, nextCursor: cursor + limit, serverNow })
  }
  const server = createServer((req, res) => {
    state.open++
    res.once('close', () => (state.open--, res.writableFinished || state.cut++))
    const path = req.url!.split('?')[0]!
    state.paths.push(path)
    if (state.paths.length > 1000) state.paths.shift()
    if (path.endsWith('/.well-known/wire'))
      // at any base path
      return json(res, {
        protocol: 'wire',
        version: '1',
        subwires: [{ authority: o.authority ?? state.authority, name: `hostile ${mode}` }],
        features: ['signals', 'poll'],
        limits: { maxLimit: 100 },
      })
    if (mode === 'trickle') {
      res.writeHead(200, { 'content-type': 'application/json' })
      const t = setInterval(() => res.write(' '), o.trickleMs ?? 500)
      timers.add(t)
      res.once('close', () => (clearInterval(t), timers.delete(t)))
      return
    }
    if (path === '/sw/signals') return feed(req, res)
    if (mode === 'html')
      return res
        .writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'session=stolen; Path=/', 'content-security-policy': 'default-src *' })
        .end('<script>document.cookie</script>')
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found","message":"no"}}')
  })
  server.on('connection', (s) => (sockets.add(s), s.once('close', () => sockets.delete(s))))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  state.url = `http://127.0.0.1:${port}`
  state.authority = `127.0.0.1:${port}`
  let closed: Promise<void> | null = null
  state.close = () =>
    (closed ??= (async () => {
      for (const x of timers) clearInterval(x)
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    })())
  t.teardown(() => state.close())
  return state
}

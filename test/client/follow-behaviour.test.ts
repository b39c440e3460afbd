import type { ServerResponse } from 'node:http'
import t from 'tap'
import { backoffDelay, retryDelay, SeenIds, WireClient, WireError, type EmittedSignal } from '../../client/src/index.js'
import { until } from '../helpers/wait.js'
import { collect, failingProxy, httpServer, listeningBoard, TOKEN } from './support.js'

// How a follower waits, retries, deduplicates and drops: against real local HTTP servers that
// answer as a misbehaving network or server would, and a real board behind a failing proxy.

const sig = (id: string, o: Partial<EmittedSignal> = {}): EmittedSignal => ({
  id,
  uri: `sw://test/signals/${id}`,
  origin: 'fp_x',
  originName: null,
  originUri: 'sw://test/identities/fp_x',
  originVerified: true,
  type: 'broadcast',
  tags: [],
  payload: { $type: 'broadcast' },
  ttl: 60,
  boostBits: 0,
  pinned: false,
  refId: null,
  refUri: null,
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 60_000).toISOString(),
  ...o,
})
const page = (res: ServerResponse, signals: EmittedSignal[], nextCursor: number, serverNow = new Date()) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ signals, nextCursor, serverNow: serverNow.toISOString() }))
}
const cursorOf = (url: string | undefined) => Number(new URL(url ?? '/', 'http://x').searchParams.get('cursor') ?? -1)
const gaps = (times: number[]) => times.slice(1).map((x, i) => x - times[i]!)

t.test('a signal sent twice (overlapping pages, another reader) is yielded once', async (t) => {
  const a = sig('AAAAAAAAAAAAAAAAAAAA')
  const b = sig('BBBBBBBBBBBBBBBBBBBB')
  const srv = await httpServer(t, (req, res, n) => {
    if (n === 1) return page(res, [a], 1)
    if (n === 2) return page(res, [a, b], 2) // a again
    setTimeout(() => page(res, [], cursorOf(req.url)), 50)
  })
  const ctl = new AbortController()
  const c = collect(new WireClient({ url: srv.url }).follow({}, { cursor: 0, signal: ctl.signal }))
  await c.until(2)
  ctl.abort()
  await c.done
  t.same(
    c.got.map((s) => s.id),
    [a.id, b.id],
  )
})

t.test("a signal that expired in flight is dropped, by the server's clock; a pinned one is kept", async (t) => {
  const serverNow = new Date(Date.now() + 3_600_000) // the server's clock is an hour ahead of ours
  const stale = sig('CCCCCCCCCCCCCCCCCCCC', { expiresAt: new Date(Date.now() + 60_000).toISOString() })
  const pinned = sig('DDDDDDDDDDDDDDDDDDDD', { expiresAt: new Date(Date.now() + 60_000).toISOString(), pinned: true })
  const fresh = sig('EEEEEEEEEEEEEEEEEEEE', { expiresAt: new Date(Date.now() + 7_200_000).toISOString() })
  const srv = await httpServer(t, (req, res, n) => {
    if (n === 1) return page(res, [stale, pinned, fresh], 3, serverNow)
    setTimeout(() => page(res, [], cursorOf(req.url), serverNow), 50)
  })
  const ctl = new AbortController()
  const cursors: number[] = []
  const c = collect(new WireClient({ url: srv.url }).follow({}, { cursor: 0, signal: ctl.signal, onCursor: (x) => void cursors.push(x) }))
  await c.until(2)
  ctl.abort()
  await c.done
  t.same(
    c.got.map((s) => s.id),
    [pinned.id, fresh.id],
  )
  t.equal(cursors[0], 3, 'the cursor still moves past the dropped one')
})

t.test('a server that answers at once with nothing is not hammered', async (t) => {
  const srv = await httpServer(t, (req, res) => page(res, [], cursorOf(req.url))) // ignores wait
  const ctl = new AbortController()
  const c = collect(new WireClient({ url: srv.url }).follow({}, { cursor: 5, signal: ctl.signal, minIntervalMs: 300 }))
  await until(() => srv.times.length >= 5, 5000, 'five polls')
  ctl.abort()
  await c.done
  // measured at the server, so a first request's connection set-up may shave a little off one gap
  t.ok(
    gaps(srv.times.slice(0, 5)).every((g) => g >= 250),
    `polls about 300 ms apart, not back to back: ${gaps(srv.times.slice(0, 5))}`,
  )
})

t.test('5xx and no answer: exponential backoff, then the next reader with the same cursor', async (t) => {
  const s1 = sig('FFFFFFFFFFFFFFFFFFFF')
  const broken = await httpServer(t, (_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' })
    res.end('{"error":{"code":"internal","message":"boom"}}')
  })
  const cursorsAsked: number[] = []
  const healthy = await httpServer(t, (req, res) => {
    cursorsAsked.push(cursorOf(req.url))
    if (cursorsAsked.length === 1) return page(res, [s1], 8)
    setTimeout(() => page(res, [], cursorOf(req.url)), 50)
  })
  const retries: Array<{ code: string; delayMs: number; url: string }> = []
  const ctl = new AbortController()
  const wire = new WireClient({ url: [broken.url, 'http://127.0.0.1:1', healthy.url] })
  const c = collect(
    wire.follow(
      {},
      {
        cursor: 7,
        signal: ctl.signal,
        backoff: { baseMs: 100 },
        onRetry: (r) => void retries.push({ code: r.error.code, delayMs: r.delayMs, url: r.url }),
      },
    ),
  )
  await c.until(1)
  ctl.abort()
  await c.done
  t.same(
    c.got.map((s) => s.id),
    [s1.id],
  )
  t.same(
    retries.map((r) => [r.url, r.code]),
    [
      [broken.url, 'internal'],
      ['http://127.0.0.1:1', 'unavailable'],
    ],
    'one failure on each bad reader',
  )
  t.ok(retries[0]!.delayMs >= 50 && retries[1]!.delayMs >= 100, `never immediate, growing: ${retries.map((r) => r.delayMs)}`)
  t.equal(cursorsAsked[0], 7, 'the next reader is asked from the same cursor')
})

t.test('an answer that retrying cannot fix ends the iteration with the WireError', async (t) => {
  const srv = await httpServer(t, (_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' })
    res.end('{"error":{"code":"invalid_request","message":"since must be …"}}')
  })
  const err = await collect(new WireClient({ url: srv.url }).follow({ since: 'yesterday' })).done.catch((e: unknown) => e)
  t.ok(err instanceof WireError && err.code === 'invalid_request' && err.status === 400, 'invalid_request 400')
})

for (const status of [429, 503])
  t.test(`a real board behind a proxy answering ${status} with Retry-After: the follower waits as told`, async (t) => {
    const { url, wire } = await listeningBoard(t)
    const proxy = await failingProxy(t, url, status, 2, '1')
    const published = (await wire.publish({ $type: 'broadcast', text: `through ${status}` })).signal
    const retries: number[] = []
    const ctl = new AbortController()
    const c = collect(
      new WireClient({ url: proxy.url, token: TOKEN }).follow(
        {},
        { cursor: 0, signal: ctl.signal, onRetry: (r) => void retries.push(r.delayMs) },
      ),
    )
    await c.until(1)
    ctl.abort()
    await c.done
    t.same(
      c.got.map((s) => s.id),
      [published.id],
      'the signal arrives once the proxy forwards',
    )
    t.equal(proxy.failed(), 2)
    t.ok(
      retries.length === 2 && retries.every((d) => d >= 1000 && d <= 1100),
      `each wait is Retry-After (1 s) plus at most 10 %: ${retries}`,
    )
    const g = gaps(proxy.feedTimes.slice(0, 3))
    t.ok(
      g.every((x) => x >= 1000),
      `the next request came no sooner than told: ${g} ms`,
    )
  })

t.test('backoff and retry delays', async (t) => {
  for (let i = 0; i < 12; i++) {
    const d = backoffDelay(i, { baseMs: 100, maxMs: 5000 })
    const step = Math.min(5000, 100 * 2 ** i)
    t.ok(d >= step / 2 && d <= step, `attempt ${i}: ${d} within [${step / 2}, ${step}]`)
  }
  t.equal(
    backoffDelay(3, {}, () => 0),
    1000,
    'the jitter never goes below half the step',
  )
  t.equal(
    retryDelay(new WireError('rate_limited', 429, 'x', undefined, { retryAfter: 7 }), 0, undefined, () => 0),
    7000,
  )
  t.equal(
    retryDelay(new WireError('rate_limited', 429, 'x', undefined, { retryAfter: 86400 }), 0, undefined, () => 0),
    15 * 60_000,
    'capped',
  )
  t.equal(
    retryDelay(new WireError('internal', 500), 0, { baseMs: 100 }, () => 0),
    50,
    'no Retry-After: backoff',
  )
})

t.test('the seen-id set is bounded', async (t) => {
  const seen = new SeenIds(3)
  t.same(
    ['a', 'b', 'a', 'c', 'd', 'a'].map((id) => seen.add(id)),
    [true, true, false, true, true, true],
    'a forgotten once three newer ones came',
  )
  t.equal(seen.size, 3)
})

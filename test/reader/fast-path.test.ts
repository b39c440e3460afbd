import t, { type Test } from 'tap'
import { hotCounts } from '../../libs/shared/metrics/index.js'
import { bodyOf, comparable, statusOf, type RawConnection } from '../helpers/raw-http.js'
import { until } from '../helpers/wait.js'
import { listening } from '../helpers/fast-path.js'

// The fast path serves GET /sw/signals below fastify on real sockets. Anything it does not take goes
// to node's server and fastify with the connection, and everything it answers is what fastify would
// answer (but the Date header's second and serverNow).

const answered = (c: RawConnection, n: number) => until(() => c.answers.length >= n, 5000, `${n} answer(s)`)

const listen = (t: Test, env: Record<string, string> = {}) => listening(t, env, { overrides: { fallbackPollMs: 60_000 } })

t.test('what the fast path answers is what fastify answers: a page, 429 and 503', async (t) => {
  const { s, open, viaFastify } = await listen(t, { READ_RATE_LIMIT_MAX: '4' })
  // budgets count in Redis once it is ready (before, each process counts in memory): count from then on
  await until(() => s.infra.redis?.status === 'ready', 5000, 'Redis ready')
  const cursor = (await s.read()).nextCursor as number
  await s.publish({ $type: 'broadcast', text: 'one' })
  const served0 = hotCounts.fastPathServed
  const handed0 = hotCounts.fastPathHandedOver

  const fast = open()
  const fastify = await viaFastify() // 127.0.0.1's budget of 4 reads: s.read(), GET /sw/wire and the two pages below
  fast.get(`/sw/signals?cursor=${cursor}`)
  await answered(fast, 1)
  fastify.get(`/sw/signals?cursor=${cursor}`)
  await answered(fastify, 1)
  t.equal(statusOf(fast.answers[0]!), 200)
  t.match(bodyOf(fast.answers[0]!), { signals: [{ payload: { text: 'one' } }] })
  t.equal(comparable(fast.answers[0]!), comparable(fastify.answers[0]!), 'a page: the same bytes')
  t.equal(hotCounts.fastPathServed - served0, 1, 'the fast path served one request')
  t.equal(hotCounts.fastPathHandedOver - handed0, 1, 'and handed one connection to fastify')

  // the budget is spent: both refuse with 429 and Retry-After
  fast.get(`/sw/signals?cursor=${cursor}`)
  fastify.get(`/sw/signals?cursor=${cursor}`)
  await answered(fast, 2)
  await answered(fastify, 2)
  t.equal(statusOf(fast.answers[1]!), 429)
  t.match(fast.answers[1]!.toString(), /\r\nretry-after: \d+\r\n/)
  t.equal(bodyOf(fast.answers[1]!).error.code, 'rate_limited')
  const noRetryValue = (b: Buffer) => comparable(b).replace(/retry-after: \d+/, 'retry-after: -')
  t.equal(noRetryValue(fast.answers[1]!), noRetryValue(fastify.answers[1]!), '429: the same bytes')
})

t.test('a long-poll refused because the process is full: the same 503 from the fast path and fastify', async (t) => {
  const { s, open, viaFastify } = await listen(t, { READER_MAX_WAITERS: '1' })
  const cursor = (await s.read()).nextCursor as number
  const holder = open()
  holder.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'one long-poll waits')
  const fast = open()
  const fastify = await viaFastify()
  fast.get(`/sw/signals?cursor=${cursor}&wait=20`)
  fastify.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await answered(fast, 1)
  await answered(fastify, 1)
  t.equal(statusOf(fast.answers[0]!), 503)
  t.match(bodyOf(fast.answers[0]!), { error: { code: 'unavailable' } })
  t.equal(comparable(fast.answers[0]!), comparable(fastify.answers[0]!), '503: the same bytes')
})

t.test("requests the fast path does not take are fastify's, on the same connection and in order", async (t) => {
  const { s, open } = await listen(t)
  const cursor = (await s.read()).nextCursor as number

  // pipelined in one write: the fast path's, then another route, then the fast path's path again (now fastify's)
  const piped = open()
  piped.write(
    `GET /sw/signals?cursor=${cursor} HTTP/1.1\r\nHost: a\r\n\r\nGET /sw/wire HTTP/1.1\r\nHost: a\r\n\r\nGET /sw/v1/signals?cursor=${cursor} HTTP/1.1\r\nHost: a\r\n\r\n`,
  )
  await answered(piped, 3)
  t.same(piped.answers.map(statusOf), [200, 200, 200])
  t.ok(
    'nextCursor' in bodyOf(piped.answers[0]!) && 'uri' in bodyOf(piped.answers[1]!) && 'nextCursor' in bodyOf(piped.answers[2]!),
    'answers in request order',
  )

  const cases: Array<[string, string, number]> = [
    ['a query the domain refuses', `GET /sw/signals?cursor=abc HTTP/1.1\r\nHost: a\r\n\r\n`, 400],
    ['a trailing slash', `GET /sw/signals/?cursor=${cursor} HTTP/1.1\r\nHost: a\r\n\r\n`, 200],
    ['HTTP/1.0', `GET /sw/signals?cursor=${cursor} HTTP/1.0\r\n\r\n`, 200],
    ['no Host', `GET /sw/signals?cursor=${cursor} HTTP/1.1\r\n\r\n`, 400],
    ['a POST', `POST /sw/signals HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`, 401],
    ['a CORS preflight', `OPTIONS /sw/signals HTTP/1.1\r\nHost: a\r\nOrigin: https://x\r\nAccess-Control-Request-Method: GET\r\n\r\n`, 204],
    [
      'a GET with a chunked body',
      `GET /sw/signals?cursor=${cursor} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      200,
    ],
    [
      'two Authorization headers',
      `GET /sw/signals?cursor=${cursor} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n`,
      200,
    ],
    ['a bare LF in a header', `GET /sw/signals?cursor=${cursor} HTTP/1.1\r\nHost: a\r\nX-A: b\nc\r\n\r\n`, 400],
    ['a head over 16 KiB', `GET /sw/signals?cursor=${cursor} HTTP/1.1\r\nHost: a\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`, 431],
  ]
  for (const [what, raw, status] of cases) {
    const c = open()
    c.write(raw)
    await until(() => c.answers.length === 1 || c.closed, 5000, what)
    t.equal(c.answers[0] && statusOf(c.answers[0]), status, `${what}: ${status} from node or fastify`)
  }

  // a head split over two packets is node's to assemble
  const split = open()
  split.write(`GET /sw/signals?cursor=${cursor} HTTP/1.1\r\nHo`)
  await new Promise((r) => setImmediate(r)) // a turn between the writes, so they leave as two packets (what is under test)
  split.write('st: a\r\n\r\n')
  await answered(split, 1)
  t.equal(statusOf(split.answers[0]!), 200, 'a split head: answered')
})

t.test('a fast-path long-poll stops waiting when its client leaves; a client that sends too much ahead is cut off', async (t) => {
  const { s, open } = await listen(t)
  const cursor = (await s.read()).nextCursor as number
  const c = open()
  c.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'waiting')
  c.end()
  await until(() => s.reader.readSide.feed.waiting === 0, 5000, 'the wait ended with its connection')

  const greedy = open()
  greedy.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'waiting')
  greedy.write('X'.repeat(100_000)) // no answer is owed yet: this is not a request queue (more than a head and a publish's body)
  await until(() => greedy.closed, 5000, 'cut off')
  await until(() => s.reader.readSide.feed.waiting === 0, 5000, 'and its wait ended')
})

t.test('idle fast-path connections close after HTTP_KEEP_ALIVE_TIMEOUT_MS, as node closes its own', async (t) => {
  const { s, open } = await listen(t, { HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000' })
  const c = open()
  c.get(`/sw/signals?cursor=${(await s.read()).nextCursor}`)
  await answered(c, 1)
  t.match(c.answers[0]!.toString(), /\r\nKeep-Alive: timeout=1\r\n/, 'the timeout is announced')
  const at = Date.now()
  await until(() => c.closed, 5000, 'closed when idle')
  t.ok(Date.now() - at >= 900, `closed after ${Date.now() - at} ms idle (announced 1 s)`)
})

t.test('shutdown: waiting fast-path long-polls are answered with Connection: close, idle fast-path connections close', async (t) => {
  const { s, open } = await listen(t)
  const cursor = (await s.read()).nextCursor as number
  const waiting = open()
  const idle = open()
  idle.get(`/sw/signals?cursor=${cursor}`)
  await answered(idle, 1)
  waiting.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'waiting')
  await s.app.close() // resolves only once every connection is gone
  await answered(waiting, 1) // the answer was written before its socket closed; the client reads it now
  t.equal(waiting.answers.length, 1, 'the long-poll was answered')
  t.equal(statusOf(waiting.answers[0]!), 200)
  t.match(waiting.answers[0]!.toString(), /\r\nConnection: close\r\n/)
  t.same(bodyOf(waiting.answers[0]!).signals, [], 'with what it had: nothing new')
  await until(() => waiting.closed && idle.closed, 5000, 'both connections closed')
})

t.test('TRUST_PROXY: the fast path counts a forwarded client against its own budget, as fastify does', async (t) => {
  const { s, open } = await listen(t, { READ_RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' })
  await until(() => s.infra.redis?.status === 'ready', 5000, 'Redis ready') // budgets count in Redis from then on
  const cursor = (await s.read()).nextCursor as number
  const status = async (client: string) => {
    const c = open()
    c.get(`/sw/signals?cursor=${cursor}`, `X-Forwarded-For: ${client}\r\n`)
    await answered(c, 1)
    return statusOf(c.answers[0]!)
  }
  t.same(
    [await status('203.0.113.7'), await status('203.0.113.7'), await status('203.0.113.7')],
    [200, 200, 429],
    'the forwarded client is limited',
  )
  t.equal(await status('203.0.113.8'), 200, 'another client behind the same proxy is not')
})

t.test('one connection, several forwarded clients (a front keeps its connections): each request is its own caller', async (t) => {
  // the fast path keeps one answer object per connection and each request takes it over: a request
  // must not be counted as the client of the one before it on the same connection
  const { s, open } = await listen(t, { READ_RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' })
  await until(() => s.infra.redis?.status === 'ready', 5000, 'Redis ready')
  const cursor = (await s.read()).nextCursor as number
  const c = open()
  const statuses: number[] = []
  for (const client of ['203.0.113.21', '203.0.113.22', '203.0.113.22', '203.0.113.21', '203.0.113.21']) {
    c.get(`/sw/signals?cursor=${cursor}`, `X-Forwarded-For: ${client}\r\n`)
    await answered(c, statuses.length + 1)
    statuses.push(statusOf(c.answers[statuses.length]!))
  }
  t.same(statuses, [200, 200, 200, 200, 429], 'two reads each, counted against the client that sent them')
})

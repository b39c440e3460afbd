import type net from 'node:net'
import t, { type Test } from 'tap'
import { MAX_PIPELINED, MAX_QUEUED } from '../../libs/shared/http/index.js'
import { bodyOf, rawConnection, statusOf } from '../helpers/raw-http.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// HTTP/1.1 pipelining on node's path (fastify): every request the board runs is answered. A client
// may send many requests in one write; the board runs MAX_PIPELINED at once, holds the next ones
// unread, and never stores a publish whose answer it then drops (a client that sends again what a
// closed connection left unanswered would store it twice).

async function board(t: Test, env: Record<string, string> = {}) {
  const s = await startStack(t, {
    env: { PUBLISH_RATE_LIMIT_MAX: '10000', READ_RATE_LIMIT_MAX: '0', SHED_EVENT_LOOP_DELAY_MS: '0', ...env },
  })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  return { s, port: (s.app.server.address() as net.AddressInfo).port }
}

const publishRequest = (i: number) => {
  const body = JSON.stringify({ $type: 'broadcast', i })
  return `POST /sw/signals HTTP/1.1\r\nHost: board.example\r\nAuthorization: Bearer agent-one-token\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
}
const getRequest = (path: string, pad = '') => `GET ${path} HTTP/1.1\r\nHost: board.example\r\n${pad && `X-Pad: ${pad}\r\n`}\r\n`
const stored = async (s: Awaited<ReturnType<typeof board>>['s']) =>
  (await s.read('limit=100')).signals.map((x: { payload: { i: number } }) => x.payload.i)

for (const fastPath of ['1', '0']) {
  t.test(`10 publishes pipelined in one write are all run and all answered (HTTP_FAST_PATH=${fastPath})`, async (t) => {
    const { s, port } = await board(t, { HTTP_FAST_PATH: fastPath })
    const c = rawConnection(port)
    t.teardown(c.end)
    c.write(Array.from({ length: 10 }, (_, i) => publishRequest(i)).join(''))
    await until(() => c.answers.length === 10 || c.closed, 10_000, '10 answers')
    t.same(c.answers.map(statusOf), Array(10).fill(200), 'ten answers, in order, all 200')
    t.same(
      c.answers.map((a) => bodyOf(a).signal.payload.i),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    )
    t.same(
      (await stored(s)).sort((a: number, b: number) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      'each stored once',
    )
    t.notOk(c.closed, 'the connection stays open')
  })

  t.test(`24 GETs pipelined in one packet are all answered (HTTP_FAST_PATH=${fastPath})`, async (t) => {
    const { port } = await board(t, { HTTP_FAST_PATH: fastPath })
    const c = rawConnection(port)
    t.teardown(c.end)
    // /sw/wire is fastify's on either setting; with the fast path off, so is /sw/signals
    const paths = Array.from({ length: 24 }, (_, i) => (i % 2 ? '/sw/wire' : '/sw/signals?limit=1'))
    c.write(paths.map((p) => getRequest(p)).join(''))
    await until(() => c.answers.length === 24 || c.closed, 10_000, '24 answers')
    t.equal(c.answers.length, 24, 'every request answered')
    t.same(c.answers.map(statusOf), Array(24).fill(200))
    t.ok(
      c.answers.every((a, i) => (i % 2 ? 'uri' in bodyOf(a) : 'nextCursor' in bodyOf(a))),
      'each its own answer, in order',
    )
    t.notOk(c.closed)
  })
}

t.test('a client that pipelines hundreds of requests over many packets and reads its answers gets every one', async (t) => {
  const { port } = await board(t, { HTTP_FAST_PATH: '0' })
  const c = rawConnection(port)
  t.teardown(c.end)
  const n = 300 // ~3 KB heads: ~900 KB, read by the board as its answers drain
  const pad = 'x'.repeat(3000)
  c.write(Array.from({ length: n }, () => getRequest('/sw/wire', pad)).join(''))
  await until(() => c.answers.length === n || c.closed, 20_000, `${n} answers`)
  t.equal(c.answers.length, n, `${c.answers.length} answers, closed: ${c.closed}`)
  t.ok(c.answers.every((a) => statusOf(a) === 200))
  t.notOk(c.closed)
})

t.test('a publish waiting its turn whose body comes in a later packet is read and answered', async (t) => {
  const { s, port } = await board(t, { HTTP_FAST_PATH: '0' })
  const c = rawConnection(port)
  t.teardown(c.end)
  const body = JSON.stringify({ $type: 'broadcast', i: 99 })
  const head = `POST /sw/signals HTTP/1.1\r\nHost: board.example\r\nAuthorization: Bearer agent-one-token\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
  c.write(Array.from({ length: 12 }, () => getRequest('/sw/wire')).join('') + head + body.slice(0, 5))
  await until(() => c.answers.length === 12, 10_000, 'the 12 GETs answered')
  c.write(body.slice(5))
  await until(() => c.answers.length === 13 || c.closed, 10_000, 'the publish answered')
  t.equal(statusOf(c.answers[12]!), 200)
  t.same(await stored(s), [99])
})

t.test(
  'publishes past the queue: the first is refused 503 with Connection: close, none after it runs, and every one that ran is answered',
  async (t) => {
    const { s, port } = await board(t, { HTTP_FAST_PATH: '0' })
    const c = rawConnection(port)
    t.teardown(c.end)
    const sent = MAX_PIPELINED + MAX_QUEUED + 20 // one write of ~11 KB: one packet, parsed at once
    c.write(Array.from({ length: sent }, (_, i) => publishRequest(i)).join(''))
    await c.whenClosed
    const statuses = c.answers.map(statusOf)
    const ok = statuses.filter((x) => x === 200).length
    t.equal(ok, MAX_PIPELINED + MAX_QUEUED, `the first ${MAX_PIPELINED + MAX_QUEUED} ran and were answered`)
    t.same(statuses.slice(ok), [503], 'then one 503, then the connection closed')
    const last = c.answers.at(-1)!
    t.match(last.toString('latin1'), /\r\nconnection: close\r\n/i)
    t.equal(bodyOf(last).error.code, 'unavailable')
    const ids = (await stored(s)).sort((a: number, b: number) => a - b)
    t.same(
      ids,
      Array.from({ length: ok }, (_, i) => i),
      'stored: exactly the publishes answered 200, once each',
    )
  },
)

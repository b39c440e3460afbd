import net from 'node:net'
import t, { type Test } from 'tap'
import { MAX_PIPELINED } from '../../libs/shared/http/index.js'
import { hotCounts } from '../../libs/shared/metrics/index.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// A pipeline flood (as node's test-http-pipeline-flood.js): a client that pipelines thousands of
// large reads and never reads an answer. Each answer is a page of 100 signals of ~15 KB (~1.5 MB).
// The server must stop reading the socket (the client's sends back up) and hold at most a few
// answers, whichever path serves the connection: the fast path (GET /sw/signals) or fastify.

const PAGE = '/sw/signals?limit=100'
const PAD = 'x'.repeat(3000) // each request head ~3 KB: thousands of them outgrow the kernel's socket buffers
const REQUESTS = 3000

async function floodedBoard(t: Test, env: Record<string, string>) {
  const s = await startStack(t, {
    env: { READ_RATE_LIMIT_MAX: '0', LONG_POLLS_PER_ADDRESS_MAX: '0', SHED_EVENT_LOOP_DELAY_MS: '0', ...env },
  })
  const text = 'y'.repeat(15_000)
  for (let i = 0; i < 100; i++) t.equal((await s.publish({ $type: 'broadcast', i, text })).statusCode, 200)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  return { s, port: (s.app.server.address() as net.AddressInfo).port }
}

/** Pipelines REQUESTS reads on a socket that never reads. */
async function flood(port: number, path: string) {
  const socket = net.connect({ port, host: '127.0.0.1' })
  socket.on('error', () => {})
  let closed = false
  socket.once('close', () => (closed = true))
  await new Promise((r) => socket.once('connect', r))
  socket.pause() // never reads: the server's answers back up in the kernel, then in the server
  const head = `GET ${path} HTTP/1.1\r\nHost: board.example\r\nX-Pad: ${PAD}\r\n\r\n`
  for (let i = 0; i < REQUESTS && !closed; i++) socket.write(head)
  return { socket, closed: () => closed }
}

/**
 * Resolves once `count` has stopped moving for `quietMs` (checked every 50 ms, at most `ms`).
 * @NOTE what is tested is an absence (the server answers no more), so this watches the count for a
 * while: there is no event for "nothing more happens".
 */
async function settled(count: () => number, quietMs = 600, ms = 20_000) {
  let last = count()
  let since = Date.now()
  await until(
    () => {
      const now = count()
      if (now !== last) (last = now), (since = Date.now())
      return Date.now() - since >= quietMs
    },
    ms,
    'the count to settle',
  )
  return last
}

t.test('the fast path stops reading a socket whose answers back up, and holds at most one answer', async (t) => {
  const { port } = await floodedBoard(t, {})
  const served0 = hotCounts.fastPathServed
  const rss0 = process.memoryUsage().rss
  const { socket } = await flood(port, PAGE)
  const servedNow = () => hotCounts.fastPathServed - served0
  await until(() => servedNow() > 0, 10_000, 'a first answer')
  const served = await settled(servedNow)
  t.ok(served < 50, `answered ${served} of ${REQUESTS} pipelined reads before it stopped reading`)
  const grew = (process.memoryUsage().rss - rss0) / 2 ** 20
  t.ok(grew < 48, `RSS grew ${grew.toFixed(1)} MB (every answer: ${((REQUESTS * 1.5e6) / 2 ** 30).toFixed(1)} GB)`)
  t.ok(socket.writableLength > 0, "the client's requests stay unread")
  socket.destroy()
})

t.test('fastify (the fast path off) stops reading a socket whose answers back up, and runs at most a few of its requests', async (t) => {
  const { port } = await floodedBoard(t, { HTTP_FAST_PATH: '0' })
  const reads0 = hotCounts.tailReads + hotCounts.dbReads
  const ran = () => hotCounts.tailReads + hotCounts.dbReads - reads0 // each GET /sw/signals run reads the feed once
  const rss0 = process.memoryUsage().rss
  const { socket, closed } = await flood(port, PAGE)
  await until(() => ran() > 0, 10_000, 'a first request to run')
  const total = await settled(ran)
  t.ok(total < 100, `ran ${total} of ${REQUESTS} pipelined reads (at most ${MAX_PIPELINED} at once) before it stopped reading`)
  const grew = (process.memoryUsage().rss - rss0) / 2 ** 20
  t.ok(grew < 48, `RSS grew ${grew.toFixed(1)} MB`)
  t.ok(socket.writableLength > 0, "the client's requests stay unread")
  t.notOk(closed(), 'and the connection is not cut: what ran is answered as the client reads')
  socket.destroy()
})

import net from 'node:net'
import t, { type Test } from 'tap'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// A connection must send a whole request head within HTTP_HEADERS_TIMEOUT_MS of connecting,
// whichever path would serve it: one that sends nothing, and one that trickles a head byte by
// byte (slow loris), are both closed by then (plus the 250 ms the check runs on), not held until
// the keep-alive timeout (72 s).

const HEADERS_TIMEOUT_MS = 1000
const CHECK_MS = 250

async function listening(t: Test, env: Record<string, string> = {}) {
  const s = await startStack(t, { env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), ...env } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  return (s.app.server.address() as net.AddressInfo).port
}

/** Opens a connection; resolves with how long it stayed open, in ms (or fails past `maxMs`). */
async function heldFor(port: number, send: (socket: net.Socket) => void, maxMs = 8000): Promise<number> {
  const socket = net.connect({ port, host: '127.0.0.1' })
  socket.on('error', () => {})
  socket.resume() // reads (and drops) what the server says, so its closing is seen
  let closedAt = 0
  socket.once('close', () => (closedAt = Date.now()))
  await new Promise((r) => socket.once('connect', r))
  const t0 = Date.now()
  send(socket)
  await until(() => closedAt > 0, maxMs, 'the server to close the connection')
  return closedAt - t0
}

const slowLoris = (socket: net.Socket) => {
  const head = 'GET /sw/signals HTTP/1.1\r\nHost: board.example\r\nX-Slow: '
  let i = 0
  const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write(head[i++ % head.length]!)), 100)
  socket.once('close', () => clearInterval(drip))
}

for (const [name, env] of [
  ['the fast path', {}],
  ['fastify (fast path off)', { HTTP_FAST_PATH: '0' }],
] as const) {
  t.test(`${name}: a silent connection and a slow-loris head are closed within the headers timeout`, async (t) => {
    const port = await listening(t, env)
    const silent = await heldFor(port, () => {})
    t.ok(silent >= HEADERS_TIMEOUT_MS - 100, `the silent one was given its time (${silent} ms)`)
    t.ok(silent <= HEADERS_TIMEOUT_MS + CHECK_MS + 400, `and closed after ${silent} ms`)
    const slow = await heldFor(port, slowLoris)
    t.ok(slow <= HEADERS_TIMEOUT_MS + CHECK_MS + 400, `the slow loris closed after ${slow} ms`)
  })
}

t.test('a connection that sent its request in time lives on for keep-alive', async (t) => {
  const port = await listening(t)
  const socket = net.connect({ port, host: '127.0.0.1' })
  socket.on('error', () => {})
  let data = ''
  socket.on('data', (c) => (data += c))
  socket.write('GET /sw/signals?limit=1 HTTP/1.1\r\nHost: board.example\r\n\r\n')
  await until(() => data.includes('"nextCursor"'), 5000, 'an answer')
  // @NOTE an absence again: past the headers timeout, the connection is still open
  await new Promise((r) => setTimeout(r, HEADERS_TIMEOUT_MS + CHECK_MS + 300))
  t.notOk(socket.destroyed || socket.readyState !== 'open', 'still open after the headers timeout')
  socket.write('GET /sw/signals?limit=1 HTTP/1.1\r\nHost: board.example\r\n\r\n')
  await until(() => data.split('"nextCursor"').length === 3, 5000, 'a second answer on it')
  socket.destroy()
})

// A head sent in time but not yet read when the deadline's check runs (the process's event loop
// stalled past the headers timeout: a saturated machine, a long GC) is the server's delay, not the
// client's: it is answered, not refused with 408. The stall is forced: the connection is accepted,
// its request written, and then this process (the server's) blocks its event loop past the deadline,
// so the loop's timers run before it reads the socket (before the fix: 408).
// Only the fast path: the connection is the fence's until its first head. With the fast path off,
// node's own headers-timeout check (connectionsCheckingInterval) runs in the same timers phase and
// answers 408 itself; that check is node's, and a reader's polls take the fast path.
t.test('the fast path: a head that waited unread through a stalled event loop is answered, not timed out', async (t) => {
  const s = await startStack(t, { env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  let accepted = 0
  s.app.server.on('connection', () => accepted++)
  const socket = net.connect({ port, host: '127.0.0.1' })
  socket.on('error', () => {})
  let data = ''
  socket.on('data', (c) => (data += c))
  await until(() => accepted === 1, 5000, 'the server to accept the connection (its deadline starts)')
  // @NOTE the stall itself is the interleaving under test: a busy event loop, not a wait on time.
  // The request is written and the loop stalled in one callback of its check phase (setImmediate),
  // so the loop's next step is its timers (the deadline's check), before it reads the socket.
  await new Promise<void>((stalled) =>
    setImmediate(() => {
      socket.write('GET /sw/signals?limit=1 HTTP/1.1\r\nHost: board.example\r\n\r\n')
      const stallUntil = Date.now() + HEADERS_TIMEOUT_MS + CHECK_MS + 100
      while (Date.now() < stallUntil);
      stalled()
    }),
  )
  await until(() => data.includes('"nextCursor"') || data.includes(' 408 ') || socket.destroyed, 5000, 'an answer')
  t.match(data, /^HTTP\/1\.1 200 /, 'the request that arrived in time is answered')
  t.notMatch(data, / 408 /, 'and not refused as too late')
  socket.destroy()
})

import { connect, type Socket } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { LIMITS } from '../../libs/shared/domain/index.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

const jsonOf = (r: Response): Promise<any> => r.json()

// Slow-loris clients are cut by the request and headers timeouts (408) while an honest long-poll
// that outlasts both is answered; connections past the per-process cap are closed at once and
// the ones already open keep working.

async function listen(s: Stack): Promise<number> {
  await s.app.listen({ host: '127.0.0.1', port: 0 })
  return (s.app.server.address() as { port: number }).port
}

/** A raw socket: everything it received, and a promise of its close. */
function rawSocket(port: number) {
  const sock = connect(port, '127.0.0.1')
  let received = ''
  sock.on('data', (d) => (received += d.toString('latin1')))
  sock.on('error', () => {})
  const closed = new Promise<void>((r) => sock.once('close', () => r()))
  const ready = new Promise<void>((r) => sock.once('connect', () => r()))
  return { sock, ready, closed, received: () => received }
}

/** Writes one byte every `ms` until the socket closes. */
function trickle(sock: Socket, ms: number, byte = ' ') {
  const timer = setInterval(() => !sock.destroyed && sock.write(byte), ms)
  sock.once('close', () => clearInterval(timer))
}

t.test('the idle timeout outlasts the longest long-poll; shorter is refused', async (t) => {
  t.ok(loadConfig({}).http.connectionTimeoutMs > LIMITS.maxWaitSeconds * 1000, 'default idle timeout above the max wait')
  t.throws(() => loadConfig({ HTTP_CONNECTION_TIMEOUT_MS: String(LIMITS.maxWaitSeconds * 1000) }), /HTTP_CONNECTION_TIMEOUT_MS/)
})

t.test('slow senders are cut; a long-poll longer than the request timeout is not', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { HTTP_REQUEST_TIMEOUT_MS: '1500', HTTP_HEADERS_TIMEOUT_MS: '1000' } })
  const port = await listen(s)
  const base = `http://127.0.0.1:${port}`

  // an honest follower waits 3 s (twice the request timeout) for a signal published meanwhile
  const head = (await jsonOf(await fetch(`${base}/sw/signals`))).nextCursor
  const poll = fetch(`${base}/sw/signals?cursor=${head}&wait=3`)

  const body = rawSocket(port)
  await body.ready
  body.sock.write(
    'POST /sw/signals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer slow-loris-token\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
  )
  trickle(body.sock, 100)
  const headers = rawSocket(port)
  await headers.ready
  headers.sock.write('GET /sw/signals HTTP/1.1\r\nHost: x\r\nX-Slow: ')
  trickle(headers.sock, 100, 'a')

  await body.closed
  t.match(body.received(), /^HTTP\/1\.1 408 /, 'a body sent a byte at a time is cut with 408')
  await headers.closed
  t.match(headers.received(), /^HTTP\/1\.1 408 /, 'headers sent a byte at a time are cut with 408')

  const published = await s.publish({ $type: 'broadcast', text: 'for the follower' }, 'honest-agent-token')
  t.equal(published.statusCode, 200)
  const answer = await poll
  t.equal(answer.status, 200, 'the long-poll is answered, not cut')
  t.same(
    (await jsonOf(answer)).signals.map((x: { id: string }) => x.id),
    [published.json().signal.id],
    'with the signal',
  )
  t.same((await s.read()).signals.length, 1, 'the slow publish stored nothing')
})

t.test('connections past HTTP_MAX_CONNECTIONS are closed; open ones keep working', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { HTTP_MAX_CONNECTIONS: '3' } })
  const port = await listen(s)
  const open = [rawSocket(port), rawSocket(port), rawSocket(port)]
  await Promise.all(open.map((c) => c.ready))
  // the server has accepted all three before the next arrives
  const connections = () => new Promise<number>((r, j) => s.app.server.getConnections((e, n) => (e ? j(e) : r(n))))
  await until(async () => (await connections()) >= 3, 5000, 'three connections accepted')
  const extra = rawSocket(port)
  await extra.closed
  t.equal(extra.received(), '', 'the fourth is closed without an answer')
  const first = open[0]!
  first.sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  await first.closed
  t.match(first.received(), /^HTTP\/1\.1 200 /, 'an open connection is still served')
  for (const c of open) c.sock.destroy()
})

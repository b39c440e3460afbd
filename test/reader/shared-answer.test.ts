import net from 'node:net'
import t from 'tap'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// Long-polls woken by one signal share one page: the first waiter's answer goes through fastify's
// send, the others are written straight to the response with the bytes already encoded. They must
// be the same answer, byte for byte (but the Date header's second), on real sockets.

/** A keep-alive HTTP/1.1 connection that collects raw answers. */
function connection(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port })
  let buf = Buffer.alloc(0)
  const answers: Buffer[] = []
  socket.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c])
    for (;;) {
      const end = buf.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length: (\d+)/i.exec(buf.toString('latin1', 0, end))?.[1] ?? 0)
      if (buf.length < end + 4 + length) return
      answers.push(buf.subarray(0, end + 4 + length))
      buf = buf.subarray(end + 4 + length)
    }
  })
  return {
    answers,
    get: (path: string, extra = '') => socket.write(`GET ${path} HTTP/1.1\r\nHost: board.example\r\nOrigin: https://viewer.example\r\n${extra}\r\n`),
    closed: new Promise<void>((resolve) => socket.once('close', () => resolve())),
    end: () => socket.destroy(),
  }
}

const withoutDate = (b: Buffer) => b.toString('latin1').replace(/\r\nDate: [^\r]*/, '\r\nDate: -')

t.test('waiters woken together get the same bytes as fastify answers, and their connections live on', async (t) => {
  const s = await startStack(t, { reader: { fallbackPollMs: 60_000 } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  const cursor = (await s.read()).nextCursor as number
  const conns = Array.from({ length: 4 }, () => connection(port))
  t.teardown(() => conns.forEach((c) => c.end()))
  for (const c of conns) c.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => s.reader.feed.waiting === 4, 5000, 'four waiting long-polls')
  t.equal((await s.publish({ $type: 'broadcast', text: 'to all' })).statusCode, 200)
  await until(() => conns.every((c) => c.answers.length === 1), 5000, 'four answers')

  const texts = conns.map((c) => withoutDate(c.answers[0]!))
  for (const text of texts.slice(1)) t.equal(text, texts[0], 'the same answer, byte for byte')
  const [head, body] = texts[0]!.split('\r\n\r\n') as [string, string]
  const lines = head.split('\r\n')
  t.equal(lines[0], 'HTTP/1.1 200 OK')
  t.same(
    lines.slice(1).map((l) => l.slice(0, l.indexOf(':')).toLowerCase()),
    ['access-control-allow-origin', 'access-control-expose-headers', 'cache-control', 'content-type', 'content-length', 'date', 'connection', 'keep-alive'],
  )
  t.ok(lines.includes('access-control-allow-origin: *'), 'CORS')
  t.ok(lines.includes('cache-control: no-store'))
  t.ok(lines.includes('content-type: application/json; charset=utf-8'))
  t.ok(lines.includes('Connection: keep-alive'))
  t.ok(lines.includes(`content-length: ${Buffer.byteLength(body)}`))
  t.match(JSON.parse(body), { signals: [{ payload: { text: 'to all' } }], nextCursor: cursor + 1 })

  // a fresh answer through fastify's send (no waiter shares it) for the same request: the same bytes
  const fresh = connection(port)
  t.teardown(() => fresh.end())
  fresh.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => fresh.answers.length === 1, 5000, 'a first-page answer')
  t.equal(withoutDate(fresh.answers[0]!).replace(/"serverNow":"[^"]*"/, ''), texts[0]!.replace(/"serverNow":"[^"]*"/, ''), 'as fastify sends it')

  // the connections serve the next request (keep-alive), and `Connection: close` is honoured
  conns[1]!.get(`/sw/signals?cursor=${cursor}`)
  conns[2]!.get(`/sw/signals?cursor=${cursor}`, 'Connection: close\r\n')
  await until(() => conns[1]!.answers.length === 2 && conns[2]!.answers.length === 2, 5000, 'second answers')
  t.match(conns[1]!.answers[1]!.toString(), /^HTTP\/1\.1 200 OK/)
  t.match(conns[2]!.answers[1]!.toString(), /\r\nConnection: close\r\n/)
  await conns[2]!.closed
})

t.test('a waiter whose request asked to close gets Connection: close with the shared bytes', async (t) => {
  const s = await startStack(t, { reader: { fallbackPollMs: 60_000 } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  const cursor = (await s.read()).nextCursor as number
  const conns = Array.from({ length: 3 }, () => connection(port))
  t.teardown(() => conns.forEach((c) => c.end()))
  conns.forEach((c, i) => c.get(`/sw/signals?cursor=${cursor}&wait=20`, i > 0 ? 'Connection: close\r\n' : ''))
  await until(() => s.reader.feed.waiting === 3, 5000, 'three waiting long-polls')
  await s.publish({ $type: 'broadcast', text: 'bye' })
  await until(() => conns.every((c) => c.answers.length === 1), 5000, 'three answers')
  for (const c of conns.slice(1)) {
    t.match(c.answers[0]!.toString(), /\r\nConnection: close\r\n/)
    await c.closed
  }
  t.match(conns[0]!.answers[0]!.toString(), /\r\nConnection: keep-alive\r\n/)
})

import type net from 'node:net'
import t from 'tap'
import { rawConnection as connection } from '../helpers/raw-http.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// Long-polls woken by one signal share one page, encoded once: the fast path writes the same bytes to
// every waiter. They must be the answer fastify gives to the same request, byte for byte (but the
// Date header's second and serverNow), on real sockets.

const withoutDate = (b: Buffer) => b.toString('latin1').replace(/\r\nDate: [^\r]*/, '\r\nDate: -')

t.test('waiters woken together get the same bytes as fastify answers, and their connections live on', async (t) => {
  const s = await startStack(t, { overrides: { fallbackPollMs: 60_000 } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  const cursor = (await s.read()).nextCursor as number
  const conns = Array.from({ length: 4 }, () => connection(port))
  t.teardown(() => conns.forEach((c) => void c.end()))
  for (const c of conns) c.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => s.reader.readSide.feed.waiting === 4, 5000, 'four waiting long-polls')
  t.equal((await s.publish({ $type: 'broadcast', text: 'to all' })).statusCode, 200)
  await until(() => conns.every((c) => c.answers.length === 1), 5000, 'four answers')

  const texts = conns.map((c) => withoutDate(c.answers[0]!))
  for (const text of texts.slice(1)) t.equal(text, texts[0], 'the same answer, byte for byte')
  const [head, body] = texts[0]!.split('\r\n\r\n') as [string, string]
  const lines = head.split('\r\n')
  t.equal(lines[0], 'HTTP/1.1 200 OK')
  t.same(
    lines.slice(1).map((l) => l.slice(0, l.indexOf(':')).toLowerCase()),
    [
      'access-control-allow-origin',
      'access-control-expose-headers',
      'cache-control',
      'content-type',
      'x-content-type-options',
      'content-length',
      'date',
      'connection',
      'keep-alive',
    ],
  )
  t.ok(lines.includes('access-control-allow-origin: *'), 'CORS')
  t.ok(lines.includes('cache-control: no-store'))
  t.ok(lines.includes('content-type: application/json; charset=utf-8'))
  t.ok(lines.includes('Connection: keep-alive'))
  t.ok(lines.includes(`content-length: ${Buffer.byteLength(body)}`))
  t.match(JSON.parse(body), { signals: [{ payload: { text: 'to all' } }], nextCursor: cursor + 1 })

  // the same request answered by fastify: a connection whose first request (GET /sw/wire) is not the
  // fast path's belongs to node's server and fastify from then on
  const fresh = connection(port)
  t.teardown(() => fresh.end())
  fresh.get('/sw/wire')
  fresh.get(`/sw/signals?cursor=${cursor}&wait=20`)
  await until(() => fresh.answers.length === 2, 5000, 'a first-page answer')
  t.equal(
    withoutDate(fresh.answers[1]!).replace(/"serverNow":"[^"]*"/, ''),
    texts[0]!.replace(/"serverNow":"[^"]*"/, ''),
    'as fastify sends it',
  )

  // the connections serve the next request (keep-alive), and `Connection: close` is honoured
  conns[1]!.get(`/sw/signals?cursor=${cursor}`)
  conns[2]!.get(`/sw/signals?cursor=${cursor}`, 'Connection: close\r\n')
  await until(() => conns[1]!.answers.length === 2 && conns[2]!.answers.length === 2, 5000, 'second answers')
  t.match(conns[1]!.answers[1]!.toString(), /^HTTP\/1\.1 200 OK/)
  t.match(conns[2]!.answers[1]!.toString(), /\r\nConnection: close\r\n/)
  await conns[2]!.closed
})

t.test('a waiter whose request asked to close gets Connection: close with the shared bytes', async (t) => {
  const s = await startStack(t, { overrides: { fallbackPollMs: 60_000 } })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (s.app.server.address() as net.AddressInfo).port
  const cursor = (await s.read()).nextCursor as number
  const conns = Array.from({ length: 3 }, () => connection(port))
  t.teardown(() => conns.forEach((c) => void c.end()))
  conns.forEach((c, i) => void c.get(`/sw/signals?cursor=${cursor}&wait=20`, i > 0 ? 'Connection: close\r\n' : ''))
  await until(() => s.reader.readSide.feed.waiting === 3, 5000, 'three waiting long-polls')
  await s.publish({ $type: 'broadcast', text: 'bye' })
  await until(() => conns.every((c) => c.answers.length === 1), 5000, 'three answers')
  for (const c of conns.slice(1)) {
    t.match(c.answers[0]!.toString(), /\r\nConnection: close\r\n/)
    await c.closed
  }
  t.match(conns[0]!.answers[0]!.toString(), /\r\nConnection: keep-alive\r\n/)
})

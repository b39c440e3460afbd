import type net from 'node:net'
import t from 'tap'
import { bodyOf, comparable, rawConnection } from '../helpers/raw-http.js'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// A page the fast path answers once is written to the socket as text (node encodes it into memory it
// frees when the write is done), not as Buffers that wait for a garbage collection: under a read
// burst those held tens of MB of malloc's heap, which glibc keeps once grown
// (bench/results/rss-after-load.md). A page many answers share (a wake-up's) is still encoded
// once. What each server-side socket is handed is recorded from node's own socket objects.

const TEXT = 'é ü € 😀 ✓' // two, three and four bytes a character in UTF-8: the content-length must count bytes

t.test(
  'a page answered once is written as text, a woken page many share from its bytes encoded once; the same bytes as fastify',
  async (t) => {
    const s = await startStack(t, { overrides: { fallbackPollMs: 60_000 } })
    const writes: Array<'text' | 'bytes'> = []
    s.app.server.on('connection', (socket: net.Socket) => {
      const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean
      socket.write = ((chunk: unknown, ...rest: unknown[]) => (
        writes.push(typeof chunk === 'string' ? 'text' : 'bytes'), write(chunk, ...rest)
      )) as typeof socket.write
    })
    await s.app.listen({ port: 0, host: '127.0.0.1' })
    const port = (s.app.server.address() as net.AddressInfo).port
    const open = () => {
      const c = rawConnection(port)
      t.teardown(() => c.end())
      return c
    }
    const cursor = (await s.read()).nextCursor as number
    await s.publish({ $type: 'broadcast', text: TEXT })

    const fast = open()
    fast.get(`/sw/signals?cursor=${cursor}`)
    await until(() => fast.answers.length === 1, 5000, 'the page')
    t.same(writes, ['text'], 'a page answered once: one write, of text')
    t.equal(bodyOf(fast.answers[0]!).signals[0].payload.text, TEXT)
    const fastify = open()
    fastify.get('/sw/wire') // not the fast path's: the connection is fastify's from here on
    fastify.get(`/sw/signals?cursor=${cursor}`)
    await until(() => fastify.answers.length === 2, 5000, 'fastify answered')
    t.equal(comparable(fast.answers[0]!), comparable(fastify.answers[1]!), 'the same bytes as fastify, content-length in bytes')

    // two long-polls at the head, woken by one signal: one page object for both
    const head = bodyOf(fast.answers[0]!).nextCursor as number
    const [a, b] = [open(), open()]
    writes.length = 0
    a.get(`/sw/signals?cursor=${head}&wait=20`)
    b.get(`/sw/signals?cursor=${head}&wait=20`)
    await until(() => s.reader.readSide.feed.waiting === 2, 5000, 'two long-polls wait')
    await s.publish({ $type: 'broadcast', text: TEXT })
    await until(() => a.answers.length === 1 && b.answers.length === 1, 5000, 'both woken')
    t.same(writes, ['text', 'bytes'], 'the first answer with the woken page as text, the second from its shared bytes')
    t.equal(comparable(a.answers[0]!), comparable(b.answers[0]!), 'the same answer')
    t.equal(bodyOf(b.answers[0]!).signals[0].payload.text, TEXT)
  },
)

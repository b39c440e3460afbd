import t from 'tap'
import { startStack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// READER_MAX_WAITERS: a process holds at most that many waiting long-polls (HTTP and the agent
// surfaces alike); one more gets a fast 503 unavailable with Retry-After, the waiting ones still get
// their signal, and the slots come back as they are answered.

t.test('past READER_MAX_WAITERS a long-poll gets 503 at once; the waiting ones are served', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { READER_MAX_WAITERS: '3', LONG_POLLS_PER_ADDRESS_MAX: '0' } })
  const head = (await s.read()).nextCursor
  const poll = (cursor = head) => s.app.inject({ url: `/sw/signals?cursor=${cursor}&wait=20` }).then((r) => r) // .then() sends it now
  const waiting = [poll(), poll(), poll()]
  await until(() => s.reader.readSide.feed.waiting === 3, 5000, 'three waiting long-polls')

  const t0 = Date.now()
  const over = await poll()
  t.equal(over.statusCode, 503)
  t.equal(over.json().error.code, 'unavailable')
  t.ok(Number(over.headers['retry-after']) >= 1, 'Retry-After')
  t.ok(Date.now() - t0 < 2000, 'at once, not after the wait')
  t.equal((await s.app.inject({ url: `/sw/signals?cursor=${head}` })).statusCode, 200, 'a read that does not wait is served')

  const mcp = await s.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_signals', arguments: { cursor: head, wait: 20 } } },
  })
  const toolError = JSON.parse(mcp.json().result.content[0].text).error
  t.match(toolError, { code: 'unavailable', retryAfter: Number }, 'an MCP long-poll is refused the same way')

  const sig = (await s.publish({ $type: 'broadcast', text: 'wake' })).json().signal
  const answers = await Promise.all(waiting)
  for (const r of answers)
    t.same(
      r.json().signals.map((x: { id: string }) => x.id),
      [sig.id],
      'a waiting poll gets the signal',
    )
  t.equal(s.reader.readSide.feed.waiting, 0)
  const again = poll(answers[0]!.json().nextCursor)
  await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'a slot to be free again')
  const sig2 = (await s.publish({ $type: 'broadcast', text: 'again' })).json().signal
  t.equal((await again).json().signals[0].id, sig2.id)
  t.notOk(
    s.logs.some((l) => l.includes('"level":50')),
    'a full process is no fault: nothing at error level',
  )
})

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js'
import t, { type Test } from 'tap'
import { READ_FILTERS } from '../../libs/shared/domain/index.js'
import { until } from '../helpers/wait.js'
import { insertSignals, sweepOnce } from '../sweeper/support.js'
import { post, startListening } from './listen.js'

// The MCP Events binding (apps/agents/mcp-events.ts): events/list declares the board's signals as one
// event type, events/poll reads after Wire's cursor, long-polls with waitMs, and says truncated when
// the board no longer keeps what lay after the cursor. Through the official TypeScript client (the
// 2025-11-25 handshake) and as 2026-07-28 requests.

const EXT = 'io.modelcontextprotocol/events'
const EVENT = 'signal.published'
const V = '2026-07-28'
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} }
const DAY = 86_400

async function connect(t: Test, url: string) {
  const client = new Client({ name: 'wire-events-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)))
  t.teardown(() => client.close())
  return client
}

type Poll = {
  events: Array<{ eventId: string; name: string; timestamp: string; data: any }>
  cursor: string
  truncated: boolean
  hasMore: boolean
  nextPollMs: number
}
const poll = async (c: Client, params: Record<string, unknown>) =>
  (await c.request({ method: 'events/poll', params }, ResultSchema)) as unknown as Poll

/** One 2026-07-28 request, as a client of that era sends it (no session, the method in a header). */
async function modern(url: string, method: string, params: Record<string, unknown> = {}) {
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method }
  return post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: META, ...params } }), headers)
}

t.test('MCP Events at /mcp', async (t) => {
  const { s, url } = await startListening(t)
  const client = await connect(t, url)

  t.test('the capability is declared in both eras', async (t) => {
    t.same(client.getServerCapabilities()?.extensions?.[EXT], {}, 'initialize (2025-11-25)')
    const r = await modern(url, 'server/discover')
    t.same(r.json.result.capabilities.extensions?.[EXT], {}, 'server/discover (2026-07-28)')
  })

  t.test('events/list: one event type, its arguments the read filters, delivered by poll', async (t) => {
    const { events } = (await client.request({ method: 'events/list', params: {} }, ResultSchema)) as any
    t.equal(events.length, 1)
    const [e] = events
    t.match(e, {
      name: EVENT,
      delivery: ['poll'],
      inputSchema: { type: 'object', additionalProperties: false },
      payloadSchema: { type: 'object' },
    })
    t.same(
      Object.keys(e.inputSchema.properties),
      READ_FILTERS.map((f) => f.param),
      "every read filter of the domain's table, and nothing else",
    )
    t.ok(Object.keys(e.inputSchema.properties).includes('tag'))
    t.same(e.payloadSchema.required, ['id', 'origin', 'type', 'payload', 'ttl', 'createdAt'])
    const modernList = await modern(url, 'events/list')
    t.equal(modernList.status, 200)
    t.same(modernList.json.result.events, events, 'the same list in 2026-07-28')
  })

  t.test('events/poll: a null cursor starts now; a cursor gets the signals after it, once', async (t) => {
    const start = await poll(client, { name: EVENT, cursor: null })
    t.same(start.events, [], 'start from now: nothing replayed')
    t.match(start, { truncated: false, hasMore: false, cursor: /^\d+$/ })
    const a = (await s.publish({ $type: 'broadcast', $tags: ['ev'], text: 'one' })).json()
    const b = (await s.publish({ $type: 'offer', text: 'two' })).json()
    const got = await poll(client, { name: EVENT, cursor: start.cursor })
    t.same(
      got.events.map((e) => e.eventId),
      [a.signal.id, b.signal.id],
    )
    t.same(
      got.events[0],
      {
        eventId: a.signal.id,
        name: EVENT,
        timestamp: a.signal.createdAt,
        data: {
          id: a.signal.id,
          origin: a.signal.origin,
          type: 'broadcast',
          tags: ['ev'],
          payload: { text: 'one' },
          ttl: a.signal.ttl,
          createdAt: a.signal.createdAt,
        },
      },
      'the compact signal as data',
    )
    t.match(got, { cursor: String(b.cursor), truncated: false, hasMore: false, nextPollMs: 2000 })
    t.same((await poll(client, { name: EVENT, cursor: got.cursor })).events, [], 'nothing twice')
    const byNumber = await poll(client, { name: EVENT, cursor: Number(start.cursor), arguments: { tag: 'ev' } })
    t.same(
      byNumber.events.map((e) => e.eventId),
      [a.signal.id],
      "Wire's cursor as a number too; the read filters as arguments",
    )
    t.equal(byNumber.cursor, got.cursor, 'a filtered poll moves past what it looked at')
  })

  t.test('maxEvents pages: hasMore until the backlog is read, then the cursor is the head', async (t) => {
    const from = (await poll(client, { name: EVENT, cursor: null })).cursor
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await s.publish({ $type: 'broadcast', n: i })).json().signal.id)
    const first = await poll(client, { name: EVENT, cursor: from, maxEvents: 2 })
    t.match(first, { hasMore: true, nextPollMs: 0 })
    const second = await poll(client, { name: EVENT, cursor: first.cursor, maxEvents: 2 })
    t.same(
      [...first.events, ...second.events].map((e) => e.eventId),
      ids,
    )
    t.equal(second.hasMore, false)
  })

  t.test('waitMs long-polls: a publish wakes a waiting poll', async (t) => {
    const from = (await poll(client, { name: EVENT, cursor: null })).cursor
    const waiting = poll(client, { name: EVENT, cursor: from, waitMs: 4000, arguments: { tag: 'wake' } })
    await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'the poll to wait')
    await s.publish({ $type: 'broadcast', $tags: ['other'], text: 'noise' })
    const woke = (await s.publish({ $type: 'broadcast', $tags: ['wake'], text: 'wake up' })).json()
    const got = await waiting
    t.same(
      got.events.map((e) => e.eventId),
      [woke.signal.id],
    )
    t.match(got, { truncated: false, nextPollMs: 0 })
  })

  t.test('a waitMs far past the clamp ends as an empty answer at the same cursor, not a client timeout', async (t) => {
    const from = (await poll(client, { name: EVENT, cursor: null })).cursor
    const got = await poll(client, { name: EVENT, cursor: from, waitMs: 600_000, arguments: { type: 'never-published' } })
    t.same(got.events, [])
    t.equal(got.cursor, from)
  })

  t.test('events/poll in 2026-07-28', async (t) => {
    const from = (await modern(url, 'events/poll', { name: EVENT, cursor: null })).json.result
    t.equal(from.resultType, 'complete')
    const pub = (await s.publish({ $type: 'broadcast', text: 'modern' })).json()
    const r = await modern(url, 'events/poll', { name: EVENT, cursor: from.cursor })
    t.equal(r.status, 200)
    t.same(
      r.json.result.events.map((e: { eventId: string }) => e.eventId),
      [pub.signal.id],
    )
  })

  t.test('a cursor beyond the board (another board, a reset one) comes back to the head, truncated', async (t) => {
    const head = (await poll(client, { name: EVENT, cursor: null })).cursor
    const got = await poll(client, { name: EVENT, cursor: String(Number(head) + 1000) })
    t.match(got, { events: [], cursor: head, truncated: true })
  })

  t.test('bad params are JSON-RPC errors, the board serving on', async (t) => {
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['an unknown event', { name: 'email.received', cursor: null }, -32011, 'one event type'],
      ['no name', { cursor: '1' }, -32602, 'name'],
      ['a cursor that is not one', { name: EVENT, cursor: 'abc' }, -32602, 'cursor'],
      ['a negative cursor', { name: EVENT, cursor: -1 }, -32602, 'cursor'],
      ['an unknown argument', { name: EVENT, cursor: null, arguments: { colour: 'red' } }, -32602, 'colour'],
      ['a filter the board refuses', { name: EVENT, cursor: '0', arguments: { since: 'yesterday-ish' } }, -32602, 'since'],
      ['the same, with a null cursor', { name: EVENT, cursor: null, arguments: { since: 'yesterday-ish' } }, -32602, 'since'],
      ['a negative waitMs', { name: EVENT, cursor: '0', waitMs: -5 }, -32602, 'waitMs'],
    ]
    for (const [what, params, code, says] of cases) {
      const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'events/poll', params }), {
        accept: 'application/json, text/event-stream',
      })
      t.ok(r.status < 500, `${what}: not a 5xx (${r.status})`)
      t.equal(r.json?.error?.code, code, `${what}: ${code}`)
      t.match(r.json?.error?.message, says, `${what}: the message says what`)
    }
    for (const method of ['events/stream', 'events/subscribe']) {
      const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 9, method, params: { name: EVENT } }), {
        accept: 'application/json, text/event-stream',
      })
      t.equal(r.json?.error?.code, -32601, `${method}: push and webhook delivery are not offered`)
    }
    t.same((await poll(client, { name: EVENT, cursor: null })).events, [], 'and polls still answer')
  })
})

t.test('truncated: the board no longer keeps what lay after the cursor', async (t) => {
  // seq 1: pinned, three days old (kept for ever: the cursor's own signal); 2–6: expired three
  // days ago, past the one-day grace; 7–8: fresh
  const { s, url } = await startListening(t, {
    seed: async (infra, schema) => {
      await insertSignals(infra.primary, schema, { type: 'anchor', count: 1, createdSecondsAgo: 3 * DAY, ttl: 60, pinned: true })
      await insertSignals(infra.primary, schema, { type: 'gone', count: 5, createdSecondsAgo: 3 * DAY, ttl: 60 })
      await insertSignals(infra.primary, schema, { type: 'fresh', count: 2, createdSecondsAgo: 60, ttl: 3600 })
    },
  })
  const client = await connect(t, url)
  const types = (p: Poll) => p.events.map((e) => e.data.type)

  const past = await poll(client, { name: EVENT, cursor: '1' })
  t.same(types(past), ['fresh', 'fresh'])
  t.match(past, { cursor: '8', truncated: true }, 'past their grace, not purged yet: a gap already')
  const after = await poll(client, { name: EVENT, cursor: '6' })
  t.match(after, { cursor: '8', truncated: false }, 'an old cursor past the gap: nothing lost after it')

  const { purge } = await sweepOnce(s)
  t.equal(purge.expired, 5, 'the sweeper purges them')
  t.match(await poll(client, { name: EVENT, cursor: '1' }), { cursor: '8', truncated: true }, 'purged: still a gap')
  t.match(await poll(client, { name: EVENT, cursor: '6' }), { cursor: '8', truncated: false })
  t.match(await poll(client, { name: EVENT, cursor: '8' }), { events: [], truncated: false }, 'at the head: nothing to lose')
})

t.test("a long-poll past the address's slots is refused with ResourceExhausted (-32013), never held", async (t) => {
  const { s, url } = await startListening(t, { env: { LONG_POLLS_PER_ADDRESS_MAX: '1' } })
  const client = await connect(t, url)
  const from = (await poll(client, { name: EVENT, cursor: null })).cursor
  const waiting = poll(client, { name: EVENT, cursor: from, waitMs: 4000 })
  await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'the first poll to wait')
  const r = await post(
    `${url}/mcp`,
    JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'events/poll', params: { name: EVENT, cursor: from, waitMs: 4000 } }),
    { accept: 'application/json, text/event-stream' },
  )
  t.equal(r.json?.error?.code, -32013)
  t.match(r.json?.error?.data, { code: 'rate_limited', retryAfter: Number })
  t.same((await poll(client, { name: EVENT, cursor: from })).events, [], 'a poll that does not wait takes no slot')
  const pub = (await s.publish({ $type: 'broadcast', text: 'release' })).json()
  t.same(
    (await waiting).events.map((e) => e.eventId),
    [pub.signal.id],
    'the waiting poll is answered',
  )
})

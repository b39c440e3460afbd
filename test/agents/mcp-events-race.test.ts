import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { openInfra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { publishSignal } from '../../libs/shared/publish/index.js'
import { holdQueriesWith } from '../helpers/held-db.js'
import { agentsOn, writerOn } from '../helpers/roles.js'
import { until } from '../helpers/wait.js'
import { post, startListening } from './listen.js'
import { everyFollowerSawAll, jitterCommits } from '../helpers/cursor-promise.js'

// The cursor promise through events/poll (apps/agents/mcp-events.ts): the forced interleaving of
// test/reader/cursor-race.test.ts, and the concurrent publishers of test/e2e/feed-invariant.test.ts,
// with followers that only keep the events cursor.

const EVENT = 'signal.published'
const TOKEN = 'needle-7f3a9c'
const quiet = createLogger('agents', 'silent')
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

type Poll = { events: Array<{ eventId: string }>; cursor: string; truncated: boolean; hasMore: boolean }

/** events/poll on an app in this process (no socket): the 2025-11-25 era, stateless. */
async function pollOn(app: FastifyInstance, params: Record<string, unknown>): Promise<Poll> {
  const r = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: mcpHeaders,
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'events/poll', params }),
  })
  const body = r.json()
  if (!body.result) throw new Error(`events/poll failed: ${r.body}`)
  return body.result as Poll
}

for (const by of ['q', 'tag'] as const) {
  t.test(`a cursor older than the tail, by ${by}: a match published during the page query is delivered, never stepped over`, async (t) => {
    const { s } = await startListening(t)
    // 200 signals that do not match, so a filtered poll cannot be answered from a 20-signal tail alone
    for (let i = 0; i < 4; i++)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => s.publish({ $type: 'broadcast', text: `noise ${i}-${j}` }, `noise-agent-${j}`)),
      )
    // a second agents process whose page queries for TOKEN answer only when released
    const hold = holdQueriesWith(s.infra.readDb, TOKEN.toLowerCase())
    const agents = await agentsOn(s.cfg, quiet, { ...s.infra, readDb: hold.db }, { tailSize: 20, fallbackPollMs: 10_000 })
    t.teardown(() => agents.close())

    const args = by === 'q' ? { q: TOKEN } : { tag: TOKEN }
    const polling = pollOn(agents.app, { name: EVENT, cursor: '1', arguments: args, waitMs: 4000 })
    await until(() => hold.held() === 1, 15_000, 'the page query to be held')
    const pub = (await s.publish({ $type: 'reply-wanted', $tags: [TOKEN], text: `answer for ${TOKEN}` })).json()
    await until(() => agents.ctx.readSide.feed.head >= pub.cursor, 15_000, 'the agents process to pull the new signal into its tail')
    hold.release()

    const got = await polling
    t.same(
      got.events.map((e) => e.eventId),
      [pub.signal.id],
      'the poll delivers the signal that arrived during its query',
    )
    t.ok(Number(got.cursor) >= pub.cursor, 'and its cursor moves past it only having delivered it')
    t.equal(got.truncated, false)
  })
}

t.test('events/poll followers under concurrent publishers see every acknowledged signal once, in order, never truncated', async (t) => {
  const env = { PUBLISH_RATE_LIMIT_MAX: '100000', READ_RATE_LIMIT_MAX: '100000' }
  const { s, url } = await startListening(t, { env, seed: (infra, schema) => jitterCommits(infra.primary, schema) })
  // a second writer on its own connections, as a second writer process would be
  const extra = await openInfra(s.cfg, quiet)
  t.teardown(() => extra.close())
  const writer2 = await writerOn(s.cfg, quiet, extra)
  t.teardown(() => writer2.close())
  const writers = [s.writer, writer2]

  const client = new Client({ name: 'events-follower', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)))
  t.teardown(() => client.close())
  type Read = (cursor: string | null) => Promise<Poll>
  // the official client (2025-11-25), long-polling in small pages; a 2026-07-28 client polling without a wait
  const viaClient: Read = async (cursor) =>
    (await client.request(
      { method: 'events/poll', params: { name: EVENT, cursor, maxEvents: 7, waitMs: 4000 } },
      ResultSchema,
    )) as unknown as Poll
  const viaModern: Read = async (cursor) => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'events/poll' }
    const r = await post(
      `${url}/mcp`,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'events/poll', params: { _meta: meta, name: EVENT, cursor, maxEvents: 13 } }),
      headers,
    )
    if (!r.json?.result) throw new Error(`events/poll failed: ${r.status} ${r.text}`)
    return r.json.result as Poll
  }
  const kinds: Array<[string, Read]> = [
    ['long-polling follower (2025-11-25 client)', viaClient],
    ['polling follower (2026-07-28)', viaModern],
  ]
  const starts = await Promise.all(kinds.map(async ([, read]) => (await read(null)).cursor))
  t.same(starts, ['0', '0'], 'followers start at the empty head')

  const acked: string[] = []
  let target = Infinity // the last acknowledged seq once publishing is over (seq is dense from 1)
  let giveUpAt = Infinity
  const follow = async (name: string, read: Read, cursor: string) => {
    const seen: string[] = []
    let wentBack = 0
    let truncated = 0
    for (;;) {
      const page = await read(cursor)
      if (Number(page.cursor) < Number(cursor)) wentBack++
      if (page.truncated) truncated++
      cursor = page.cursor
      for (const e of page.events) seen.push(e.eventId)
      if (Number(cursor) >= target || Date.now() > giveUpAt) break
      if (!page.events.length) await new Promise((r) => setTimeout(r, 5)) // a polite client between empty polls
    }
    t.equal(wentBack, 0, `${name}: the cursor never went back`)
    t.equal(truncated, 0, `${name}: never truncated`)
    return { name, seen }
  }
  const followers = kinds.map(([name, read], i) => follow(name, read, starts[i]!))

  const PUBLISHERS = 8
  const PER_PUBLISHER = 20
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async (_, p) => {
      for (let i = 0; i < PER_PUBLISHER; i++) {
        const writer = writers[(p + i) % writers.length]!
        const sig = await publishSignal(
          writer.publisher.deps,
          { address: `10.0.0.${p}`, authorization: `Bearer publisher-${p}-token` },
          JSON.stringify({ $type: 'broadcast', p, i }),
        )
        acked.push(sig.id)
      }
    }),
  )
  target = acked.length
  giveUpAt = Date.now() + 15_000
  const results = await Promise.all(followers)

  t.equal(acked.length, PUBLISHERS * PER_PUBLISHER, 'every publish was acknowledged')
  await everyFollowerSawAll(t, s.infra.primary, s.schema, acked, results)
})

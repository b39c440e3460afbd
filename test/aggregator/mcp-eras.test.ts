import t from 'tap'
import { legacy, mcpEndpointChecks, modern, toolJson } from '../helpers/mcp.js'
import { eventually } from '../helpers/wait.js'
import { auth, startTestAggregator, startTestBoard } from './support.js'

// The aggregator's /mcp speaks what the board's does (test/agents/mcp-2026.test.ts runs the same
// checks there): 2025-11-25 and 2026-07-28 on one stateless endpoint. Its two tools answer as their
// HTTP routes in both eras, and a follower that keeps search_signals' nextCursor never skips a signal.

type Era = 'legacy' | 'modern'
const call = async (era: Era, url: string, name: string, args: Record<string, unknown>) => {
  const r =
    era === 'legacy'
      ? await legacy(url, 'tools/call', { name, arguments: args })
      : await modern(url, 'tools/call', { name, arguments: args })
  return { isError: r.json.result?.isError === true, json: toolJson(r) }
}
const publish = (board: string, tag: string, text: string) =>
  fetch(`${board}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'broadcast', $tags: [tag], text }),
  }).then(async (r) => ((await r.json()) as { signal: { id: string } }).signal.id)

t.test("the aggregator's MCP, both eras", async (t) => {
  const [one, two] = [await startTestBoard(t), await startTestBoard(t)]
  const agg = await startTestAggregator(t)
  for (const b of [one, two]) t.equal((await agg.register(b.url)).status, 201)

  mcpEndpointChecks(t, agg.url, { server: 'wire-aggregator', tools: ['search_signals', 'list_boards'] })

  for (const era of ['legacy', 'modern'] as const)
    t.test(`${era}: the tools answer what GET /registry/boards and GET /search/signals answer`, async (t) => {
      const listed = await call(era, agg.url, 'list_boards', { limit: 1 })
      const http = (await (await fetch(`${agg.url}/registry/boards?limit=1`)).json()) as any
      t.same(listed.json, http, 'list_boards: the same page')
      t.same((await call(era, agg.url, 'list_boards', { cursor: http.nextCursor })).json.boards.length, 1, 'and the next')
      const id = await publish(one.url, `find-${era}`, `found via ${era}`)
      t.ok(
        await eventually(
          async () => (await call(era, agg.url, 'search_signals', { tag: `find-${era}` })).json.signals.length === 1,
          10_000,
        ),
        'search_signals finds a published signal',
      )
      const hit = await call(era, agg.url, 'search_signals', { tag: `find-${era}` })
      t.match(hit.json.signals, [{ id, board: one.authority, payload: { text: `found via ${era}` } }])
      const bad = await call(era, agg.url, 'search_signals', { since: 'yesterday-ish' })
      t.equal(bad.isError, true, 'bad input is a tool error')
      t.equal(bad.json.error.code, 'invalid_request')
    })

  t.test("search_signals waits as the board's read_signals: at most 4 s, a longer wait clamped, not refused", async (t) => {
    const tools = (await modern(agg.url, 'tools/list')).json.result.tools as Array<{ name: string; description: string; inputSchema: any }>
    const search = tools.find((x) => x.name === 'search_signals')!
    t.match(search.description, /at most 4 s/)
    t.match(search.inputSchema.properties.wait.description, /at most 4 \(/)
    t.notOk('maximum' in search.inputSchema.properties.wait, 'no maximum: a longer wait is clamped')
    const head = (await call('modern', agg.url, 'search_signals', { tag: 'nothing-here' })).json.nextCursor
    for (const era of ['legacy', 'modern'] as const) {
      const t0 = Date.now()
      const page = await call(era, agg.url, 'search_signals', { tag: 'nothing-here', cursor: head, wait: 60 })
      t.equal(page.isError, false, `${era}: wait=60 is no error`)
      t.same(page.json.signals, [], `${era}: an empty answer`)
      t.equal(page.json.nextCursor, head, `${era}: the cursor to go on from`)
      t.ok(Date.now() - t0 < 15_000, `${era}: answered in ${Date.now() - t0} ms, not at 25 s`)
    }
    // a wait of any size is clamped, one that prints as 1e+21 too, as the board's read_signals clamps it
    const huge = await call('modern', agg.url, 'search_signals', { tag: 'nothing-here', cursor: head, wait: 1e21 })
    t.equal(huge.isError, false, 'wait=1e21 is no error')
    t.same(huge.json.signals, [], 'and an empty answer')
  })

  t.test('the cursor promise through MCP: a follower of either era that keeps nextCursor sees every signal, once', async (t) => {
    const tag = 'promise'
    const followers = (['legacy', 'modern'] as const).map((era) => ({ era, seen: [] as string[], cursor: 0 }))
    for (const f of followers) f.cursor = (await call(f.era, agg.url, 'search_signals', { tag })).json.nextCursor
    let done = false
    const loops = followers.map(async (f) => {
      while (!done) {
        const page = (await call(f.era, agg.url, 'search_signals', { tag, cursor: f.cursor, wait: 1, limit: 3 })).json
        f.seen.push(...page.signals.map((s: { id: string }) => s.id))
        f.cursor = page.nextCursor
      }
    })
    // two boards indexed at once, published in bursts: index writes from both interleave
    const ids: string[] = []
    for (let burst = 0; burst < 4; burst++)
      ids.push(...(await Promise.all([one, two, one, two, one, two].map((b, i) => publish(b.url, tag, `burst ${burst} #${i}`)))))
    const all = () => followers.every((f) => new Set(f.seen).size >= ids.length)
    t.ok(await eventually(all, 20_000), `both followers reached all ${ids.length} signals`)
    done = true
    await Promise.all(loops)
    for (const f of followers) {
      t.equal(new Set(f.seen).size, f.seen.length, `${f.era}: no signal twice`)
      t.same([...f.seen].sort(), [...ids].sort(), `${f.era}: every signal`)
    }
  })
})

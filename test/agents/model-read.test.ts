import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { startListening } from './listen.js'

// Reads sized for models (apps/agents/model-read.ts): MCP's read tools answer a compact form on a
// page of 20 by default, take `fields`, declare an outputSchema and carry structuredContent, and
// hold a wait below the clients' deadlines.

t.test('model-facing reads', async (t) => {
  const { s, url } = await startListening(t)
  const client = new Client({ name: 'model-read-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)))
  t.teardown(() => client.close())
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args })
    return { r, json: JSON.parse((r.content as Array<{ text: string }>)[0]!.text) }
  }
  for (let i = 0; i < 25; i++) await s.publish({ $type: 'broadcast', $tags: ['Model'], text: `n${i}`, n: { '10': 1, b: 2 } })
  const http = await s.read('limit=100')

  t.test('the default read: the newest 20, compact, without what the HTTP form restates', async (t) => {
    const { r, json } = await call('read_signals', {})
    t.equal(json.signals.length, 20)
    t.same(
      json.signals.map((x: any) => x.id),
      http.signals.slice(-20).map((x: any) => x.id),
    )
    t.equal(json.nextCursor, http.nextCursor)
    const full = http.signals.at(-1)
    t.same(json.signals.at(-1), {
      id: full.id,
      origin: full.origin,
      type: 'broadcast',
      tags: ['model'],
      payload: { text: 'n24', n: { '10': 1, b: 2 } },
      ttl: full.ttl,
      createdAt: full.createdAt,
    })
    t.same(r.structuredContent, json, 'structuredContent is the same JSON')
    // the whole default read against HTTP's, on a board of 100 signals: npm run bench:model-read
    t.ok(JSON.stringify(json.signals.at(-1)).length * 2 < JSON.stringify(full).length, 'a signal in less than half its HTTP bytes')
  })

  t.test('fields: "full" is the HTTP form; a list picks fields; an unknown name is invalid_request', async (t) => {
    const full = (await call('read_signals', { limit: 100, fields: 'full' })).json
    t.same(full.signals, http.signals)
    const picked = (await call('read_signals', { limit: 2, fields: 'id,uri' })).json
    t.same(
      picked.signals,
      http.signals.slice(-2).map((x: any) => ({ id: x.id, uri: x.uri })),
    )
    const bad = await call('read_signals', { fields: ['id', 'secret'] })
    t.equal(bad.r.isError, true)
    t.equal(bad.json.error.code, 'invalid_request')
    t.match(bad.json.error.message, /"secret"/)
  })

  t.test('tools/list: read tools are read-only and declare their output', async (t) => {
    const { tools } = await client.listTools()
    for (const name of ['read_signals', 'get_signal', 'read_thread']) {
      const tool = tools.find((x) => x.name === name)!
      t.equal(tool.annotations?.readOnlyHint, true, `${name} is read-only`)
      t.equal(tool.outputSchema?.type, 'object', `${name} has an outputSchema`)
    }
    const read = tools.find((x) => x.name === 'read_signals')!
    t.same(Object.keys(read.outputSchema!.properties!).sort(), ['nextCursor', 'partial', 'serverNow', 'signals'])
    t.match(read.description, /at most 4/)
    t.match((read.inputSchema.properties as any).wait.description, /at most 4/)
  })

  t.test('a wait longer than a client deadline is clamped: the call answers empty, not at 25 s', async (t) => {
    const t0 = Date.now()
    const { json } = await call('read_signals', { cursor: http.nextCursor, wait: 25 })
    t.same(json.signals, [])
    t.equal(json.nextCursor, http.nextCursor, 'the cursor to go on from')
    t.ok(Date.now() - t0 < 15_000, `answered in ${Date.now() - t0} ms`)
  })
})

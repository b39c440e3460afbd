import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t, { type Test } from 'tap'
import { until } from '../helpers/wait.js'
import { MCP_HEADERS, post } from '../helpers/mcp.js'
import { startListening } from './listen.js'

const TOKEN = 'mcp-agent-token'

async function connect(t: Test, url: string, token?: string) {
  const client = new Client({ name: 'wire-test', version: '1.0.0' })
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }))
  t.teardown(() => client.close())
  return client
}

/** A tool call's first text content, parsed, and whether it is a tool error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await client.callTool({ name, arguments: args })
  const text = (r.content as Array<{ type: string; text: string }>)[0]!.text
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = null
  }
  return { isError: r.isError === true, text, json }
}

t.test('MCP at /mcp', async (t) => {
  const { s, url } = await startListening(t)
  const agent = await connect(t, url, TOKEN)
  const anonymous = await connect(t, url)

  t.test('lists the six tools, with input schemas a model can follow', async (t) => {
    const { tools } = await agent.listTools()
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]))
    t.same(Object.keys(byName).sort(), ['get_signal', 'publish_signal', 'read_signals', 'read_thread', 'register_identity', 'wire_info'])
    const read = byName.read_signals!.inputSchema as any
    for (const p of ['cursor', 'wait', 'limit', 'type', 'tag', 'q', 'origin', 'since', 'includeExpired'])
      t.ok(read.properties[p], `read_signals has ${p}`)
    t.equal(read.properties.cursor.type, 'integer')
    t.ok(byName.read_signals!.annotations?.readOnlyHint, 'reads are marked read-only')
    const signal = (byName.publish_signal!.inputSchema as any).properties.signal
    t.same(
      signal.anyOf.map((x: any) => x.type),
      ['object', 'string'],
      'the signal as an object or as JSON text',
    )
    t.same(signal.anyOf[0].required, ['$type'])
    t.ok(signal.anyOf[0].properties.$refId, 'the envelope fields are described')
    t.same((byName.get_signal!.inputSchema as any).required, ['id'])
  })

  t.test('a signal published through MCP is on the HTTP feed, payload verbatim', async (t) => {
    const r = await call(agent, 'publish_signal', {
      signal: { text: 'hello from mcp', $type: 'broadcast', $tags: ['MCP'], n: { b: 1, a: 2 } },
    })
    t.notOk(r.isError, r.text)
    t.equal(r.json.ok, true)
    const id = r.json.signal.id
    const http = await s.app.inject({ url: `/sw/signals/${id}` })
    t.equal(http.statusCode, 200)
    t.match(http.body, '"payload":{"text":"hello from mcp","$type":"broadcast","$tags":["mcp"],"n":{"b":1,"a":2}}', 'key order kept')
    t.same(http.json().signal, r.json.signal, 'the same emitted signal as HTTP serves')
    const page = await s.read('tag=mcp')
    t.same(
      page.signals.map((x: any) => x.id),
      [id],
    )
  })

  t.test('publish_signal also takes the signal as JSON text', async (t) => {
    const r = await call(agent, 'publish_signal', { signal: '{"$type":"offer","z":1,"a":[true,null]}' })
    t.notOk(r.isError, r.text)
    const http = await s.app.inject({ url: `/sw/signals/${r.json.signal.id}` })
    t.match(http.body, '"payload":{"$type":"offer","z":1,"a":[true,null],"$tags":[]}')
  })

  t.test('read_signals long-polls: a publish wakes a waiting call', async (t) => {
    const { json: first } = await call(anonymous, 'read_signals', { limit: 1 })
    t.type(first.nextCursor, 'number')
    t.type(first.serverNow, 'string')
    const t0 = Date.now()
    const waiting = call(anonymous, 'read_signals', { cursor: first.nextCursor, wait: 5, tag: 'wake' })
    await until(() => s.reader.readSide.feed.waiting === 1, 5000, 'the read to wait')
    await s.publish({ $type: 'broadcast', $tags: ['other'], text: 'noise' })
    t.equal((await s.publish({ $type: 'broadcast', $tags: ['wake'], text: 'wake up' })).statusCode, 200)
    const { json } = await waiting
    t.same(
      json.signals.map((x: any) => x.payload.text),
      ['wake up'],
    )
    t.equal(json.nextCursor, first.nextCursor + 2, 'the cursor moved past the skipped signal too')
    t.ok(Date.now() - t0 < 2500, `answered in ${Date.now() - t0} ms, not at the deadline`)
  })

  t.test('read_signals at the deadline answers [] with a cursor to keep; results match GET /sw/signals', async (t) => {
    const head = (await s.read()).nextCursor
    const t0 = Date.now()
    const { json } = await call(anonymous, 'read_signals', { cursor: head, wait: 1 })
    t.same(json.signals, [])
    t.equal(json.nextCursor, head)
    t.ok(Date.now() - t0 >= 900, 'it waited')
    const viaMcp = (await call(anonymous, 'read_signals', { tag: ['mcp', 'wake'], since: '1h', limit: 10, fields: 'full' })).json
    const viaHttp = await s.read('tag=mcp,wake&since=1h&limit=10')
    t.same(viaMcp.signals, viaHttp.signals)
    t.equal(viaMcp.nextCursor, viaHttp.nextCursor)
  })

  t.test('get_signal and read_thread answer as their HTTP routes', async (t) => {
    const root = (await s.publish({ $type: 'request', text: 'root' })).json().signal
    const reply = (await call(agent, 'publish_signal', { signal: { $type: 'reply', $refId: root.uri, text: 'an answer' } })).json.signal
    t.equal(reply.refId, root.id)
    const one = await call(anonymous, 'get_signal', { id: root.id, fields: 'full' })
    const http = (await s.app.inject({ url: `/sw/signals/${root.id}` })).json()
    t.same(one.json.signal, http.signal)
    t.same(one.json.replies, http.replies)
    t.equal(one.json.replies[0].id, reply.id)
    const compact = await call(anonymous, 'get_signal', { id: root.id })
    t.same(compact.json.replies[0], {
      id: reply.id,
      origin: reply.origin,
      type: 'reply',
      payload: { text: 'an answer' },
      ttl: reply.ttl,
      refId: root.id,
      createdAt: reply.createdAt,
    })
    const thread = await call(anonymous, 'read_thread', { id: root.uri, fields: ['id', 'refId'] })
    t.same(
      thread.json.signals,
      [
        { id: root.id, refId: null },
        { id: reply.id, refId: root.id },
      ],
      'fields picks fields of the HTTP form',
    )
    const full = await call(anonymous, 'read_thread', { id: root.uri, fields: 'full' })
    t.same(full.json, (await s.app.inject({ url: `/sw/signals/${root.id}/thread` })).json())
  })

  t.test('errors are tool errors carrying the protocol code', async (t) => {
    const noToken = await call(anonymous, 'publish_signal', { signal: { $type: 'broadcast', text: 'x' } })
    t.ok(noToken.isError)
    t.equal(noToken.json.error.code, 'unauthorized')
    const noType = await call(agent, 'publish_signal', { signal: { text: 'no type' } })
    t.equal(noType.json.error.code, 'invalid_request')
    const reply = await call(agent, 'publish_signal', { signal: '{"$type":"reply"}' })
    t.equal(reply.json.error.code, 'reply_requires_ref')
    const notJson = await call(agent, 'publish_signal', { signal: '{"$type":' })
    t.equal(notJson.json.error.code, 'invalid_request')
    const missing = await call(anonymous, 'get_signal', { id: 'AAAAAAAAAAAAAAAAAAAA' })
    t.equal(missing.json.error.code, 'not_found')
    const badSince = await call(anonymous, 'read_signals', { since: 'yesterday' })
    t.equal(badSince.json.error.code, 'invalid_request')
    const badArgs = await call(anonymous, 'read_signals', { cursor: -1 })
    t.ok(badArgs.isError, 'arguments outside the schema are refused')
    t.match(badArgs.text, 'cursor')
    // an unknown tool is a protocol error (the specification's -32602), not a tool's own failure
    await t.rejects(call(anonymous, 'no_such_tool'), { code: -32602, message: /no_such_tool/ })
  })

  t.test('register_identity gives a token that publishes as that identity, and is never logged', async (t) => {
    const r = await call(anonymous, 'register_identity')
    t.notOk(r.isError, r.text)
    t.match(r.json, { identityMode: 'local', identityId: /^fp_[0-9a-f]{20}$/, token: String })
    const fresh = await connect(t, url, r.json.token)
    const info = (await call(fresh, 'wire_info')).json
    t.equal(info.caller.identityId, r.json.identityId)
    const pub = await call(fresh, 'publish_signal', { signal: { $type: 'broadcast', text: 'new here' } })
    t.equal(pub.json.signal.origin, r.json.identityId)
    t.notOk(s.logs.join('').includes(r.json.token), 'the token is not in the logs')
    t.notOk(s.logs.join('').includes(TOKEN), 'nor is a bearer token of a request')
  })

  t.test('wire_info describes the board from config, not from the request', async (t) => {
    const info = (await call(agent, 'wire_info')).json
    t.match(info, { protocol: 'wire', version: '1', identityMode: 'local', mcp: `${url}/mcp`, a2a: `${url}/a2a` })
    t.match(info.board, { authority: s.cfg.authority, name: 'main', stats: { activeSignals: Number } })
    t.equal(info.limits.maxWaitSeconds, 25)
    t.equal((await call(anonymous, 'wire_info')).json.caller, null)
  })

  t.test('a plain JSON-RPC POST works too (JSON response, CORS headers kept)', async (t) => {
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } }
    // a page on the machine's own loopback (the MCP Inspector's, say); other origins: host-guard.test.ts
    const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init }), {
      ...MCP_HEADERS,
      origin: 'http://localhost:6274',
    })
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /application\/json/)
    t.equal(r.headers.get('access-control-allow-origin'), '*')
    t.match(r.json, { id: 1, result: { serverInfo: { name: 'wire' }, instructions: /read_signals/ } })
    t.notOk(r.headers.get('mcp-session-id'), 'stateless: no session')
  })

  t.test('discovery lists mcp and a2a with their URLs', async (t) => {
    const d = (await s.app.inject({ url: '/.well-known/wire' })).json()
    t.ok(d.features.includes('mcp') && d.features.includes('a2a'))
    t.equal(d.mcp, `${url}/mcp`)
    t.equal(d.a2a, `${url}/a2a`)
    const errors = s.logs.flatMap((l) => l.split('\n')).filter((l) => l && JSON.parse(l).level >= 50)
    t.same(errors, [], 'nothing was logged at error level')
  })
})

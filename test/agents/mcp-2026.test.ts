import t from 'tap'
import { post, startListening } from './listen.js'

// MCP 2026-07-28 on the same /mcp as the 2025-11-25 handshake (mcp.test.ts): no initialize, no
// session; every request carries its protocol version and client capabilities in _meta and names
// its method (and tool) in headers.

const V = '2026-07-28'
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} }
let id = 0

/** One 2026-07-28 request as a client of that era sends it; `headers` replace the usual ones. */
async function modern(url: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string | undefined> = {}) {
  const name = typeof params.name === 'string' ? { 'mcp-name': params.name } : {}
  const all: Record<string, string | undefined> = {
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': method,
    ...name,
    ...headers,
  }
  const sent = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>
  const rpcId = ++id
  const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: rpcId, method, params: { _meta: META, ...params } }), sent)
  return { ...r, rpcId }
}

const toolJson = (r: { json: any }) => JSON.parse(r.json.result.content[0].text)

t.test('MCP 2026-07-28 at /mcp, beside 2025-11-25', async (t) => {
  const { s, url } = await startListening(t)

  t.test('server/discover names the version, the tools capability and the server', async (t) => {
    const r = await modern(url, 'server/discover')
    t.equal(r.status, 200)
    t.match(r.json.result, {
      supportedVersions: [V],
      capabilities: { tools: {} },
      resultType: 'complete',
      ttlMs: 300_000,
      cacheScope: 'public',
    })
    t.equal(r.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'wire')
    t.notOk(r.headers.get('mcp-session-id'), 'no session')
  })

  t.test('tools/list carries cache hints and the same order every time', async (t) => {
    const a = await modern(url, 'tools/list')
    const b = await modern(url, 'tools/list')
    t.equal(a.status, 200)
    t.match(a.json.result, { resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' })
    const names = a.json.result.tools.map((x: { name: string }) => x.name)
    t.same(names, ['wire_info', 'read_signals', 'get_signal', 'read_thread', 'publish_signal', 'register_identity'])
    t.same(
      b.json.result.tools.map((x: { name: string }) => x.name),
      names,
      'stable order',
    )
  })

  t.test('tools/call publishes as the bearer and reads, per request', async (t) => {
    const pub = await modern(
      url,
      'tools/call',
      { name: 'publish_signal', arguments: { signal: { $type: 'broadcast', $tags: ['era'], text: 'from 2026' } } },
      { authorization: 'Bearer era-2026-token' },
    )
    t.equal(pub.status, 200)
    t.equal(pub.json.result.resultType, 'complete')
    const published = toolJson(pub)
    t.equal(published.ok, true)
    const http = (await s.app.inject({ url: `/sw/signals/${published.signal.id}` })).json()
    t.equal(http.signal.payload.text, 'from 2026')
    const read = toolJson(await modern(url, 'tools/call', { name: 'read_signals', arguments: { tag: 'era' } }))
    t.same(
      read.signals.map((x: { id: string }) => x.id),
      [published.signal.id],
    )
    const anonymous = await modern(url, 'tools/call', { name: 'publish_signal', arguments: { signal: { $type: 'broadcast', text: 'x' } } })
    t.equal(anonymous.json.result.isError, true)
    t.equal(toolJson(anonymous).error.code, 'unauthorized', 'a request without a token is anonymous, whatever came before')
  })

  t.test('a request without Mcp-Method, or naming another method, is refused with HeaderMismatch (-32020, 400)', async (t) => {
    for (const headers of [{ 'mcp-method': undefined }, { 'mcp-method': 'tools/call' }, { 'mcp-method': 'TOOLS/LIST' }]) {
      const r = await modern(url, 'tools/list', {}, headers)
      t.equal(r.status, 400, JSON.stringify(headers))
      t.equal(r.json.error.code, -32020)
      t.equal(r.json.id, r.rpcId, 'the error answers the request')
    }
    const noName = await modern(url, 'tools/call', { name: 'wire_info', arguments: {} }, { 'mcp-name': undefined })
    t.equal(noName.status, 400)
    t.equal(noName.json.error.code, -32020, 'tools/call without Mcp-Name')
    const otherName = await modern(url, 'tools/call', { name: 'wire_info', arguments: {} }, { 'mcp-name': 'read_signals' })
    t.equal(otherName.json.error.code, -32020, 'Mcp-Name naming another tool')
  })

  t.test('an unknown protocol version is UnsupportedProtocolVersion (-32022, 400) naming the supported ones', async (t) => {
    const r = await post(
      `${url}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'server/discover',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      }),
      {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2099-01-01',
        'mcp-method': 'server/discover',
      },
    )
    t.equal(r.status, 400)
    t.equal(r.json.error.code, -32022)
    t.match(r.json.error.data, { supported: [V], requested: '2099-01-01' })
  })

  t.test('_meta without clientCapabilities is invalid params (-32602, 400); methods of the old era are not found (404)', async (t) => {
    const r = await post(
      `${url}/mcp`,
      JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } } }),
      {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'tools/list',
      },
    )
    t.equal(r.status, 400)
    t.equal(r.json.error.code, -32602)
    const ping = await modern(url, 'ping')
    t.equal(ping.status, 404)
    t.equal(ping.json.error.code, -32601)
  })

  t.test('the 2025-11-25 handshake still answers on the same endpoint, as JSON', async (t) => {
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } }
    const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params: init }), {
      accept: 'application/json, text/event-stream',
    })
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /application\/json/)
    t.match(r.json.result, { protocolVersion: '2025-11-25', serverInfo: { name: 'wire' } })
    t.notOk('resultType' in r.json.result, 'no 2026-07-28 fields in a 2025 answer')
  })
})

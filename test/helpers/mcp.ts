import type { Test } from 'tap'

// Raw MCP requests of both protocol eras, and what every Wire /mcp answers alike: the board's
// (test/agents) and the aggregator's (test/aggregator), both served by libs/shared/mcp behind
// libs/shared/http's mcpRoutes.

export const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
export const V2026 = '2026-07-28'
const META = { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': {} }
let id = 0

/** A JSON POST outside the SDK clients, for the error cases they never send. */
export async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
  const text = await r.text()
  let json: any = null
  try {
    json = JSON.parse(text)
  } catch {
    json = null
  }
  return { status: r.status, headers: r.headers, json, text }
}

/** One 2026-07-28 request to `${url}/mcp` as a client of that era sends it; `headers` replace the usual ones. */
export async function modern(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | undefined> = {},
) {
  const name = typeof params.name === 'string' ? { 'mcp-name': params.name } : {}
  const all: Record<string, string | undefined> = {
    ...MCP_HEADERS,
    'mcp-protocol-version': V2026,
    'mcp-method': method,
    ...name,
    ...headers,
  }
  const sent = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>
  const rpcId = ++id
  const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: rpcId, method, params: { _meta: META, ...params } }), sent)
  return { ...r, rpcId }
}

/** One 2025-11-25 request to `${url}/mcp` without a handshake: a stateless server needs none. */
export async function legacy(url: string, method: string, params: Record<string, unknown> = {}) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params })
  return post(`${url}/mcp`, body, { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25' })
}

/** A tool call's answer (either era), its first text content parsed. */
export const toolJson = (r: { json: any }) => JSON.parse(r.json.result.content[0].text)

/**
 * The checks every Wire /mcp passes, for a server named `server` whose tools are `tools` in their
 * listed order: the 2025-11-25 handshake as JSON, 2026-07-28's discovery, cached tool list and
 * errors on the same endpoint, and the refusals answered before any SDK sees a message.
 */
export function mcpEndpointChecks(t: Test, url: string, o: { server: string; tools: string[] }) {
  const [first, second] = o.tools as [string, string]

  t.test('server/discover names the version, the tools capability and the server', async (t) => {
    const r = await modern(url, 'server/discover')
    t.equal(r.status, 200)
    t.match(r.json.result, {
      supportedVersions: [V2026],
      capabilities: { tools: {} },
      resultType: 'complete',
      ttlMs: 300_000,
      cacheScope: 'public',
    })
    t.not(r.json.result.capabilities.tools.listChanged, true, 'no listChanged: true from a stateless server')
    t.equal(r.json.result._meta['io.modelcontextprotocol/serverInfo'].name, o.server)
    t.notOk(r.headers.get('mcp-session-id'), 'no session')
  })

  t.test('tools/list carries cache hints and the same order every time', async (t) => {
    const a = await modern(url, 'tools/list')
    const b = await modern(url, 'tools/list')
    t.equal(a.status, 200)
    t.match(a.json.result, { resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' })
    const names = a.json.result.tools.map((x: { name: string }) => x.name)
    t.same(names, o.tools)
    t.same(
      b.json.result.tools.map((x: { name: string }) => x.name),
      names,
      'stable order',
    )
  })

  t.test('a request without Mcp-Method, or naming another method, is refused with HeaderMismatch (-32020, 400)', async (t) => {
    for (const headers of [{ 'mcp-method': undefined }, { 'mcp-method': 'tools/call' }, { 'mcp-method': 'TOOLS/LIST' }]) {
      const r = await modern(url, 'tools/list', {}, headers)
      t.equal(r.status, 400, JSON.stringify(headers))
      t.equal(r.json.error.code, -32020)
      t.equal(r.json.id, r.rpcId, 'the error answers the request')
    }
    const noName = await modern(url, 'tools/call', { name: first, arguments: {} }, { 'mcp-name': undefined })
    t.equal(noName.status, 400)
    t.equal(noName.json.error.code, -32020, 'tools/call without Mcp-Name')
    const otherName = await modern(url, 'tools/call', { name: first, arguments: {} }, { 'mcp-name': second })
    t.equal(otherName.json.error.code, -32020, 'Mcp-Name naming another tool')
  })

  t.test('an unknown protocol version is UnsupportedProtocolVersion (-32022, 400) naming the supported ones', async (t) => {
    const meta = { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }
    const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'server/discover', params: { _meta: meta } }), {
      ...MCP_HEADERS,
      'mcp-protocol-version': '2099-01-01',
      'mcp-method': 'server/discover',
    })
    t.equal(r.status, 400)
    t.equal(r.json.error.code, -32022)
    t.match(r.json.error.data, { supported: [V2026], requested: '2099-01-01' })
  })

  t.test('_meta without clientCapabilities is invalid params (-32602, 400); methods of the old era are not found (404)', async (t) => {
    const r = await post(
      `${url}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V2026 } },
      }),
      { ...MCP_HEADERS, 'mcp-protocol-version': V2026, 'mcp-method': 'tools/list' },
    )
    t.equal(r.status, 400)
    t.equal(r.json.error.code, -32602)
    const ping = await modern(url, 'ping')
    t.equal(ping.status, 404)
    t.equal(ping.json.error.code, -32601)
  })

  t.test('the 2025-11-25 handshake answers on the same endpoint, as JSON, without a session', async (t) => {
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } }
    const r = await post(`${url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params: init }), MCP_HEADERS)
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /application\/json/)
    t.match(r.json.result, { protocolVersion: '2025-11-25', serverInfo: { name: o.server } })
    t.not(r.json.result.capabilities.tools.listChanged, true, 'no listChanged: true')
    t.notOk('resultType' in r.json.result, 'no 2026-07-28 fields in a 2025 answer')
    t.notOk(r.headers.get('mcp-session-id'), 'stateless: no session')
  })

  t.test('malformed requests get JSON-RPC errors before any SDK, never a 5xx', async (t) => {
    const notJson = await post(`${url}/mcp`, '{"jsonrpc":', MCP_HEADERS)
    t.equal(notJson.status, 400)
    t.equal(notJson.json.error.code, -32700)
    const notRpc = await post(`${url}/mcp`, '{"hello":"world"}', MCP_HEADERS)
    t.equal(notRpc.status, 400)
    t.equal(notRpc.json.jsonrpc, '2.0')
    const batch = await post(`${url}/mcp`, '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', MCP_HEADERS)
    t.equal(batch.status, 400)
    t.match(batch.json.error, { code: -32600, data: { code: 'invalid_request' } }, 'a batch is refused')
    const deep = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"x":${'['.repeat(60)}${']'.repeat(60)}}}`
    t.match((await post(`${url}/mcp`, deep, MCP_HEADERS)).json, { id: 3, error: { code: -32600 } }, 'so is JSON nested too deep')
    const text = await post(`${url}/mcp`, '<hi/>', { ...MCP_HEADERS, 'content-type': 'application/xml' })
    t.equal(text.status, 415)
    t.equal(text.json.jsonrpc, '2.0')
    const big = await post(
      `${url}/mcp`,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x', params: { pad: 'x'.repeat(70_000) } }),
      MCP_HEADERS,
    )
    t.equal(big.status, 413)
    t.equal(big.json.error.data.code, 'payload_too_large')
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${url}/mcp`, { method, headers: MCP_HEADERS })
      t.equal(r.status, 405, `${method}: stateless, nothing to open or end`)
      t.equal(r.headers.get('allow'), 'POST')
      t.equal(((await r.json()) as any).jsonrpc, '2.0')
    }
  })
}

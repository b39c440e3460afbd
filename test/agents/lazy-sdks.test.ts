import { registerHooks } from 'node:module'
import t from 'tap'

// The single process loads the MCP and A2A SDKs on the first request that needs each
// (apps/agents/surfaces.ts): not at start, once for requests that arrive together, and a load that
// fails answers a JSON-RPC error and is tried again by the next request. Module loads are watched,
// and one made to fail, through node's own module hooks, registered before the board is imported.
// @NOTE Node 24 loads the modules of an import() without yielding to the event loop (measured: a
// second request enters the route only after the first one's load), so first requests that arrive
// together never overlap inside the load here; what is checked is that they are all answered from
// one surface (one A2A task store).

const MCP_SDK = '@modelcontextprotocol/server'
const loaded: string[] = []
let failMcp = false
registerHooks({
  resolve(specifier, context, next) {
    if (failMcp && specifier === MCP_SDK) throw new Error(`test: ${MCP_SDK} cannot be loaded`)
    return next(specifier, context)
  },
  load(url, context, next) {
    loaded.push(url)
    return next(url, context)
  },
})
const { post, startListening } = await import('./listen.js')

const sdks = () => ({
  mcp: loaded.some((u) => u.includes('/@modelcontextprotocol/server/')),
  a2a: loaded.some((u) => u.includes('/@a2a-js/sdk/')),
})
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }
const initialize = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lazy', version: '1' } },
  })
/** A2A 0.3 message/send reading the feed, by a caller with a token (so its task is kept for tasks/get). */
const readTask = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'message/send',
    params: { message: { kind: 'message', messageId: `m-${id}`, role: 'user', parts: [{ kind: 'data', data: {} }] } },
  })
const AUTH = { authorization: 'Bearer lazy-sdks-token' }

t.test('the agents SDKs load on the first request that needs them', async (t) => {
  const { url } = await startListening(t)
  t.same(sdks(), { mcp: false, a2a: false }, 'a started board has loaded neither SDK')
  t.equal((await fetch(`${url}/mcp`)).status, 405, 'GET /mcp answers without the SDK')
  t.equal((await post(`${url}/mcp`, '{not json', MCP_HEADERS)).status, 400, 'a body that is not JSON is answered without it')
  t.same(sdks(), { mcp: false, a2a: false })

  t.test('a load that fails answers a JSON-RPC internal error; the next request loads it', async (t) => {
    failMcp = true
    const failed = await post(`${url}/mcp`, initialize(1), MCP_HEADERS)
    failMcp = false
    t.equal(failed.status, 500)
    t.match(failed.json, { jsonrpc: '2.0', id: null, error: { code: -32603, data: { code: 'internal' } } })
    t.notMatch(failed.text, /cannot be loaded/, 'the cause is not in the answer')
    t.equal((await fetch(`${url}/readyz`)).status, 200, 'the board still serves')
    t.equal(sdks().mcp, false)
    const [a, b] = await Promise.all([post(`${url}/mcp`, initialize(2), MCP_HEADERS), post(`${url}/mcp`, initialize(3), MCP_HEADERS)])
    t.same([a.status, b.status], [200, 200], 'two first requests together are both answered')
    t.same([a.json.id, b.json.id], [2, 3])
    t.ok(a.json.result.capabilities.tools)
    t.same(sdks(), { mcp: true, a2a: false }, 'MCP loaded; A2A still not')
  })

  t.test(
    'A2A: two first requests together are answered from one surface (both tasks are found after, in its one task store)',
    async (t) => {
      const [a, b] = await Promise.all([post(`${url}/a2a`, readTask(1), AUTH), post(`${url}/a2a`, readTask(2), AUTH)])
      t.same([a.status, b.status], [200, 200])
      t.equal(sdks().a2a, true)
      for (const task of [a.json.result, b.json.result]) {
        t.equal(task.status.state, 'completed')
        const got = await post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/get', params: { id: task.id } }), AUTH)
        t.equal(got.json.result?.id, task.id, 'tasks/get finds it')
      }
      const card = await fetch(`${url}/.well-known/agent-card.json`)
      t.equal(card.status, 200)
      t.match(await card.json(), { url: `${url}/a2a`, protocolVersion: '0.3.0' })
    },
  )
})

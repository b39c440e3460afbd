import t from 'tap'
import { post, startListening } from '../agents/listen.js'

// The agent surfaces are no way around the per-address read budget: each POST to /mcp or /a2a
// spends a request at the HTTP door, the same budget GET /sw/signals spends, from the same address;
// a read inside it (read_signals, read-signals) spends nothing more, so a read costs one unit on
// every surface (test/abuse/one-unit-per-read.test.ts walks them all).

const mcpRead = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_signals', arguments: { limit: 1 } } })
const a2aRead = () =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: {
        kind: 'message',
        messageId: `m-${Math.random().toString(36).slice(2)}`,
        role: 'user',
        parts: [{ kind: 'data', data: { limit: 1 } }],
      },
    },
  })
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }

t.test('MCP and A2A reads spend the address read budget shared with GET /sw/signals', async (t) => {
  const { url } = await startListening(t, { env: { READ_RATE_LIMIT_MAX: '4' } })
  const http = async () => (await fetch(`${url}/sw/signals?limit=1`)).status
  t.equal(await http(), 200)
  t.equal(
    (await post(`${url}/mcp`, mcpRead(1), MCP_HEADERS)).json.result.isError,
    undefined,
    'an MCP read within the budget (the second request)',
  )
  t.equal((await post(`${url}/a2a`, a2aRead())).json.result.status.state, 'completed', 'an A2A read within the budget (the third)')
  t.equal(await http(), 200, 'the fourth request of this address')
  const mcp = await post(`${url}/mcp`, mcpRead(2), MCP_HEADERS)
  t.equal(mcp.status, 429, 'past the budget, an MCP call is refused at the door')
  t.equal(mcp.json.error.data.code, 'rate_limited', 'as a JSON-RPC error carrying the protocol code')
  const a2a = await post(`${url}/a2a`, a2aRead())
  t.equal(a2a.status, 429, 'past the budget, an A2A call is refused at the door')
  t.equal(a2a.json.error.data.code, 'rate_limited', 'as a JSON-RPC error carrying the protocol code')
  t.ok(Number(a2a.headers.get('retry-after')) > 0, 'with Retry-After')
  t.equal(await http(), 429, 'and GET /sw/signals, the same budget')
})

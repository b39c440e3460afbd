import t from 'tap'
import { post, startListening } from '../agents/listen.js'

// The agent surfaces are no way around the per-address read budget: each POST to /mcp or /a2a
// spends a request at the door, and a read inside it (read_signals, read-signals) spends one more
// at the read side's door, the same budget GET /sw/signals spends, from the same address.

const mcpRead = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_signals', arguments: { limit: 1 } } })
const a2aRead = () =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { kind: 'message', messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'user', parts: [{ kind: 'data', data: { limit: 1 } }] } },
  })
const MCP_HEADERS = { accept: 'application/json, text/event-stream' }

t.test('MCP and A2A reads spend the address read budget shared with GET /sw/signals', async (t) => {
  const { url } = await startListening(t, { env: { READ_RATE_LIMIT_MAX: '7' } })
  const http = async () => (await fetch(`${url}/sw/signals?limit=1`)).status
  t.equal(await http(), 200)
  t.equal((await post(`${url}/mcp`, mcpRead(1), MCP_HEADERS)).json.result.isError, undefined, 'an MCP read within the budget (2 of it)')
  t.equal((await post(`${url}/a2a`, a2aRead())).json.result.status.state, 'completed', 'an A2A read within the budget (2 more)')
  t.equal(await http(), 200, 'the sixth request of this address')
  const mcp = (await post(`${url}/mcp`, mcpRead(2), MCP_HEADERS)).json.result
  t.equal(mcp.isError, true, 'the seventh passes the door, and the read inside it is refused')
  t.equal(JSON.parse(mcp.content[0].text).error.code, 'rate_limited')
  const a2a = await post(`${url}/a2a`, a2aRead())
  t.equal(a2a.status, 429, 'past the budget, an A2A call is refused at the door')
  t.equal(a2a.json.error.data.code, 'rate_limited', 'as a JSON-RPC error carrying the protocol code')
  t.ok(Number(a2a.headers.get('retry-after')) > 0, 'with Retry-After')
  t.equal(await http(), 429, 'and GET /sw/signals, the same budget')
})

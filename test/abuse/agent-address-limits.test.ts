import t from 'tap'
import { post, startListening } from '../agents/listen.js'

// The agent surfaces are no way around the per-address read budget: MCP read_signals and A2A
// read-signals spend the same reads as GET /sw/signals, from the same address.

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
  const { url } = await startListening(t, { env: { READ_RATE_LIMIT_MAX: '4' } })
  const http = async () => (await fetch(`${url}/sw/signals?limit=1`)).status
  t.equal(await http(), 200)
  t.equal((await post(`${url}/mcp`, mcpRead(1), MCP_HEADERS)).json.result.isError, undefined, 'an MCP read within the budget')
  t.equal((await post(`${url}/a2a`, a2aRead())).json.result.status.state, 'completed', 'an A2A read within the budget')
  t.equal(await http(), 200, 'the fourth read of this address')
  const mcp = (await post(`${url}/mcp`, mcpRead(2), MCP_HEADERS)).json.result
  t.equal(mcp.isError, true, 'past the budget, an MCP read is refused')
  t.equal(JSON.parse(mcp.content[0].text).error.code, 'rate_limited')
  const a2a = (await post(`${url}/a2a`, a2aRead())).json.result
  t.equal(a2a.status.state, 'failed', 'and so is an A2A read')
  t.match(JSON.stringify(a2a.status.message), /rate_limited/)
  t.equal(await http(), 429, 'and GET /sw/signals, the same budget')
})

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { post, startListening } from '../agents/listen.js'

// Safe retries on the agent surfaces: MCP's publish_signal (an idempotencyKey argument, or the
// Idempotency-Key header of the request) and A2A's publish (the header) answer the original signal
// to a retry, as POST /sw/signals does, sharing the same keys.

t.test('MCP and A2A publishes honour idempotency keys, shared with HTTP', async (t) => {
  const { s, url } = await startListening(t)
  const count = async () => (await s.infra.primary.query<{ n: number }>(`select count(*)::int as n from "${s.schema}".signals`)).rows[0]!.n
  const client = new Client({ name: 'wire-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: 'Bearer agent-idem-token' } } }),
  )
  t.teardown(() => client.close())
  const publish = async (args: Record<string, unknown>) =>
    JSON.parse(((await client.callTool({ name: 'publish_signal', arguments: args })).content as Array<{ text: string }>)[0]!.text)

  const first = await publish({ signal: { $type: 'broadcast', n: 1 }, idempotencyKey: 'mcp-order-1' })
  const again = await publish({ signal: { $type: 'broadcast', n: 1 }, idempotencyKey: 'mcp-order-1' })
  t.equal(again.signal.id, first.signal.id, 'MCP: a retry with the same key is the original signal')
  t.equal(again.cursor, first.cursor)
  const stored = await count()

  const viaHttp = await s.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { ...s.bearer('agent-idem-token'), 'idempotency-key': 'mcp-order-1' },
    payload: { $type: 'broadcast', n: 1 },
  })
  t.equal(viaHttp.json().signal.id, first.signal.id, 'the same key over HTTP, same identity: the same signal')
  t.equal(await count(), stored, 'nothing new stored')

  const bad = await client.callTool({ name: 'publish_signal', arguments: { signal: { $type: 'broadcast' }, idempotencyKey: 'bad\nkey' } })
  t.ok(bad.isError, 'an invalid key is refused')
  t.equal(JSON.parse((bad.content as Array<{ text: string }>)[0]!.text).error.code, 'invalid_request')

  const send = () =>
    post(
      `${url}/a2a`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: `m-${Math.random().toString(36).slice(2)}`,
            role: 'user',
            parts: [{ kind: 'data', data: { $type: 'broadcast', via: 'a2a' } }],
          },
        },
      }),
      { authorization: 'Bearer agent-idem-token', 'idempotency-key': 'a2a-order-1' },
    )
  const a = (await send()).json
  const b = (await send()).json
  const idOf = (r: any) => r.result.artifacts[0].parts[0].data.signal.id as string
  t.equal(idOf(b), idOf(a), 'A2A: a retry with the same Idempotency-Key header is the original signal')
  t.equal(await count(), stored + 1, 'one signal for the two A2A sends')
})

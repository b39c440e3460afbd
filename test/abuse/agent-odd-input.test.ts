import { randomUUID } from 'node:crypto'
import t from 'tap'
import { post, startListening } from '../agents/listen.js'

// The agent surfaces on hostile input: deep nesting answers invalid_request (as HTTP publish does),
// never `internal` or a stack overflow; batches are refused; an anonymous caller never sees another
// anonymous caller's tasks; client strings never reach the console.

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
const nested = (depth: number): unknown => {
  let v: unknown = 'leaf'
  for (let i = 0; i < depth; i++) v = { v }
  return v
}
const mcpPublish = (signal: unknown, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'publish_signal', arguments: { signal } } })
const a2aSend = (data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'a',
    method: 'message/send',
    params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data }], ...extra } },
  })
const errorLines = (logs: string[]) => logs.flatMap((l) => l.split('\n')).filter((l) => l && JSON.parse(l).level >= 50)

t.test('deep nesting through MCP and A2A publishes answers invalid_request', async (t) => {
  const { s, url } = await startListening(t, { noRedis: true })
  const auth = { authorization: 'Bearer odd-input-token' }
  const mcp = (body: string) => post(`${url}/mcp`, body, { ...MCP_HEADERS, ...auth })

  // just past the signal's bound: the publish path refuses it, as a tool error
  const justOver = await mcp(mcpPublish({ $type: 'x', deep: nested(40) }))
  t.equal(justOver.status, 200)
  t.equal(justOver.json.result.isError, true)
  t.equal(JSON.parse(justOver.json.result.content[0].text).error.code, 'invalid_request')
  // far past it (a 64 KiB body of brackets): refused before any SDK recurses over it
  const huge = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"publish_signal","arguments":{"signal":{"$type":"x","d":${'['.repeat(20_000)}${']'.repeat(20_000)}}}}}`
  const far = await mcp(huge)
  t.equal(far.status, 400)
  t.match(far.json, { id: 7, error: { code: -32600, data: { code: 'invalid_request' } } })

  const a2aOver = await post(`${url}/a2a`, a2aSend({ $type: 'x', deep: nested(40) }), auth)
  t.equal(a2aOver.json.result.status.state, 'failed')
  t.equal(a2aOver.json.result.status.message.parts[0].data.error.code, 'invalid_request')
  const a2aFar = await post(
    `${url}/a2a`,
    a2aSend({ $type: 'x', d: 'DEEP' }).replace('"DEEP"', `${'['.repeat(20_000)}${']'.repeat(20_000)}`),
    auth,
  )
  t.match(a2aFar.json, { id: 'a', error: { code: -32600, data: { code: 'invalid_request' } } })
  t.notMatch(a2aFar.text, /call stack/i)

  t.same((await s.read()).signals, [], 'nothing was stored')
  t.same(errorLines(s.logs), [], 'nothing was logged at error level')
})

t.test('JSON-RPC batches are refused on both surfaces', async (t) => {
  const { url } = await startListening(t, { noRedis: true })
  const read = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_signals', arguments: {} } })
  const mcp = await post(`${url}/mcp`, JSON.stringify(Array.from({ length: 100 }, (_, i) => read(i))), MCP_HEADERS)
  t.equal(mcp.status, 400)
  t.match(mcp.json, { error: { code: -32600, message: /batch/, data: { code: 'invalid_request' } } })
  const a2a = await post(`${url}/a2a`, JSON.stringify([JSON.parse(a2aSend({})), JSON.parse(a2aSend({}))]))
  t.match(a2a.json, { error: { code: -32600, message: /batch/ } })
})

t.test("anonymous A2A tasks belong to their request: tasks/list and tasks/get show no one else's", async (t) => {
  const { url } = await startListening(t, { noRedis: true })
  const failed = await post(`${url}/a2a`, a2aSend({ $type: 'broadcast', secret: 'anonymous payload' })) // no token: fails unauthorized
  t.equal(failed.json.result.status.state, 'failed')
  const read = await post(`${url}/a2a`, a2aSend({ limit: 1 }))
  t.equal(read.json.result.status.state, 'completed')
  const listTasks = (id: number, headers: Record<string, string> = {}) =>
    post(`${url}/a2a`, JSON.stringify({ jsonrpc: '2.0', id, method: 'ListTasks', params: { pageSize: 100 } }), {
      'a2a-version': '1.0',
      ...headers,
    })
  const list = await listTasks(1)
  t.same(list.json.result.tasks, [], 'another anonymous caller lists nothing')
  t.notMatch(list.text, /anonymous payload/)
  const get = await post(
    `${url}/a2a`,
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: failed.json.result.id } }),
  )
  t.match(get.json, { error: { code: -32001 } }, 'nor gets one by id')
  const mine = await post(`${url}/a2a`, a2aSend({ limit: 1 }), { authorization: 'Bearer owner-token-1' })
  const theirs = await listTasks(3, { authorization: 'Bearer owner-token-1' })
  t.same(
    theirs.json.result.tasks.map((x: { id: string }) => x.id),
    [mine.json.result.id],
    'a token lists its own tasks',
  )
})

t.test('client strings never reach the console; ids must be printable', async (t) => {
  const { s, url } = await startListening(t, { noRedis: true })
  const forged = '\n{"level":60,"msg":"forged"}\u001b[2J'
  const printed: string[] = []
  const restore: Array<() => void> = []
  for (const name of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[name]
    console[name] = (...args: unknown[]) => void printed.push(args.map(String).join(' '))
    restore.push(() => (console[name] = original))
  }
  try {
    const refs = await post(
      `${url}/a2a`,
      a2aSend({ limit: 1 }, { referenceTaskIds: [forged, 'x'.repeat(1000), ...Array.from({ length: 500 }, (_, i) => `r${i}`)] }),
    )
    t.equal(refs.json.result.status.state, 'completed', 'referenceTaskIds are ignored')
    const badId = await post(`${url}/a2a`, a2aSend({ limit: 1 }, { messageId: forged }))
    t.ok(badId.json.error, 'a message id with control characters is refused')
    t.notMatch(badId.text, /\u001b/)
  } finally {
    for (const r of restore) r()
  }
  t.same(printed, [], 'nothing printed to the console')
  t.notOk(s.logs.join('').includes('"msg":"forged"'), 'no forged line in the logs')
})

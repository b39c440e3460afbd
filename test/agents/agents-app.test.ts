import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { startAgents } from '../../apps/agents/app.js'
import { startWriter } from '../../apps/writer/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// The fleet's agents process, started as apps/agents/main.ts starts it: MCP reads through a read side
// of its own, woken over Redis by a separate writer's commits, and publishes on the primary.
t.test('the agents app alone serves MCP reads and long-polls, woken by a writer elsewhere', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema()
  const cfg = loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    WIRE_PG_SCHEMA: schema,
    WIRE_CONFIG: '/nonexistent/subwire.config.json',
    LOG_LEVEL: 'silent',
    SHED_EVENT_LOOP_DELAY_MS: '0',
  })
  const writer = await startWriter(cfg, createLogger('writer', 'silent')) // migrates the schema
  const agents = await startAgents(cfg, createLogger('agents', 'silent'))
  t.teardown(async () => {
    await agents.close()
    await writer.close()
    await dropSchema(schema)
  })
  const url = await agents.app.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client({ name: 'wire-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: 'Bearer agents-only-token' } } }),
  )
  t.teardown(() => client.close())
  const text = async (name: string, args: Record<string, unknown>) =>
    JSON.parse(((await client.callTool({ name, arguments: args })).content as Array<{ text: string }>)[0]!.text)
  const feed = agents.ctx.readSide.feed

  const { nextCursor } = await text('read_signals', {})
  const waiting = text('read_signals', { cursor: nextCursor, wait: 5 })
  await until(() => feed.waiting === 1)
  const viaHttp = await writer.app.inject({
    method: 'POST',
    url: '/sw/signals',
    headers: { authorization: 'Bearer http-publisher-token' },
    payload: { $type: 'broadcast', text: 'from the writer' },
  })
  t.equal(viaHttp.statusCode, 200)
  t.same(
    (await waiting).signals.map((s: { id: string }) => s.id),
    [viaHttp.json().signal.id],
    'the waiting read saw the writer’s publish',
  )

  const pub = await text('publish_signal', { signal: { $type: 'broadcast', text: 'from mcp' } })
  t.equal(pub.ok, true)
  t.equal(pub.cursor, viaHttp.json().cursor + 1, 'the agents app publishes into the same feed')

  // shutdown answers a waiting long-poll at once instead of at its deadline
  const last = text('read_signals', { cursor: pub.cursor, wait: 5 })
  await until(() => feed.waiting === 1)
  const t0 = Date.now()
  await agents.app.close()
  t.same((await last).signals, [])
  t.ok(Date.now() - t0 < 2000, `answered in ${Date.now() - t0} ms on close, not at the 5 s deadline`)
})

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { buildWriter } from '../../apps/writer/app.js'
import { createWriterContext } from '../../apps/writer/context.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createReadSide } from '../../libs/shared/feed/index.js'
import { openInfra } from '../../libs/shared/infra/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'

// The fleet's writer process, composed as apps/writer/main.ts does: MCP reads through a read side of its own.
t.test('a writer process alone serves MCP reads and long-polls from its own read side', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema()
  const cfg = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema, WIRE_CONFIG: '/nonexistent', LOG_LEVEL: 'silent' })
  const log = createLogger('writer', cfg.logLevel)
  const infra = await openInfra(cfg, log, { migrate: true })
  const reads = await createReadSide(cfg, log, infra, infra.primary, { tailSize: 1000 })
  const ctx = await createWriterContext(cfg, log, infra, { onCommit: (head) => reads.feed.noteHead(head) })
  const app = buildWriter(ctx, infra.presence, reads)
  t.teardown(async () => {
    await app.close()
    await infra.close()
    await dropSchema(schema)
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client({ name: 'wire-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: 'Bearer writer-only-token' } } }))
  t.teardown(() => client.close())
  const text = async (name: string, args: Record<string, unknown>) =>
    JSON.parse(((await client.callTool({ name, arguments: args })).content as Array<{ text: string }>)[0]!.text)

  const { nextCursor } = await text('read_signals', {})
  const waiting = text('read_signals', { cursor: nextCursor, wait: 5 })
  await new Promise((r) => setTimeout(r, 100))
  const pub = await text('publish_signal', { signal: { $type: 'broadcast', text: 'fleet' } })
  const page = await waiting
  t.same(page.signals.map((s: { id: string }) => s.id), [pub.signal.id], 'the waiting read saw the publish')

  // shutdown answers a waiting long-poll at once instead of at its deadline
  const head = (await text('read_signals', {})).nextCursor
  const t0 = Date.now()
  const last = text('read_signals', { cursor: head, wait: 5 })
  await new Promise((r) => setTimeout(r, 100))
  await app.close()
  t.same((await last).signals, [])
  t.ok(Date.now() - t0 < 2000, `answered in ${Date.now() - t0} ms on close, not at the 5 s deadline`)
})

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { eventually } from '../helpers/wait.js'
import { auth, startTestAggregator, startTestBoard } from './support.js'

// The aggregator's own MCP endpoint and discovery document, over real sockets.

const text = (r: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((r.content as Array<{ text: string }>)[0]!.text)

t.test('MCP offers search_signals and list_boards; discovery and OpenAPI name the API', async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t)
  t.equal((await agg.register(board.url)).status, 201)
  await fetch(`${board.url}/sw/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth() },
    body: JSON.stringify({ $type: 'offer', $tags: ['gpu'], text: 'spare narwhal cycles' }),
  })

  const client = new Client({ name: 'aggregator-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', agg.url)))
  t.teardown(() => client.close())
  t.same((await client.listTools()).tools.map((x) => x.name).sort(), ['list_boards', 'search_signals'])
  const boards = text(await client.callTool({ name: 'list_boards', arguments: {} }))
  t.match(boards.boards, [{ authority: board.authority, status: 'up' }])
  t.ok(
    await eventually(
      async () => text(await client.callTool({ name: 'search_signals', arguments: { q: 'narwhal' } })).signals.length === 1,
      10_000,
    ),
    'search_signals finds it',
  )
  const hit = text(await client.callTool({ name: 'search_signals', arguments: { q: 'narwhal', tag: 'gpu' } }))
  t.match(hit.signals, [{ board: board.authority, type: 'offer', payload: { text: 'spare narwhal cycles' } }])
  const bad = await client.callTool({ name: 'search_signals', arguments: { since: 'yesterday-ish' } })
  t.equal(bad.isError, true, 'bad input is a tool error')
  t.equal(text(bad).error.code, 'invalid_request')

  const doc = (await (await fetch(`${agg.url}/.well-known/wire-aggregator`)).json()) as any
  t.match(doc, {
    protocol: 'wire',
    version: '1',
    role: 'aggregator',
    registry: `${agg.url}/registry/boards`,
    search: `${agg.url}/search/signals`,
    mcp: `${agg.url}/mcp`,
  })
  const api = (await (await fetch(doc.openapi)).json()) as any
  t.equal(api.openapi, '3.1.0')
  for (const path of ['/registry/boards', '/registry/boards/{authority}', '/search/signals'])
    t.ok(api.paths[path], `OpenAPI documents ${path}`)
})

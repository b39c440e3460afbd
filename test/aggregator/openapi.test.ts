import t from 'tap'
import { legacy } from '../helpers/mcp.js'
import { answerChecker, everyOperationServed, type Json } from '../helpers/openapi.js'
import { eventually } from '../helpers/wait.js'
import { ADMIN, auth, publishOn, searchFinds, startTestAggregator, startTestBoard } from './support.js'

// The aggregator's OpenAPI document (/openapi.json), generated from its route table
// (apps/aggregator/routes/api.ts) by the board's generator, against the aggregator itself: every
// documented operation is served, real answers of each validate against it, and the MCP tools take
// the parameters the document gives their HTTP routes (one declaration).

t.test("the aggregator's document and the aggregator agree", async (t) => {
  const board = await startTestBoard(t)
  const agg = await startTestAggregator(t)
  const { app } = agg.started()
  const doc = (await app.inject({ url: '/openapi.json' })).json() as Json
  t.match(doc, { openapi: '3.1.0', info: { title: 'Wire aggregator' }, servers: [{ url: agg.url }] })
  everyOperationServed(t, doc, app)

  const { check, exercisedAll } = answerChecker(t, doc, app)
  const admin = auth(ADMIN)
  const register = (headers: Record<string, string> = auth()) => ({
    method: 'POST',
    url: '/registry/boards',
    headers,
    payload: { url: board.url },
  })
  await check('register', register(), 201)
  await check('register again', register(), 200)
  await check('register without a token', register({}), 401)
  await check('register a URL that is not one', { ...register(), payload: { url: 'nope' } }, 400)
  await check('list', { url: '/registry/boards?limit=10' }, 200)
  await check('a bad limit', { url: '/registry/boards?limit=abc' }, 400)
  await check('one board', { url: `/registry/boards/${board.authority}` }, 200)
  await check('an unknown board', { url: '/registry/boards/nowhere.example' }, 404)
  t.equal((await publishOn(board.url, 'documented')).status, 200)
  t.ok(await eventually(() => searchFinds(agg.url, 'documented'), 10_000), 'indexed')
  await check('search', { url: '/search/signals?q=documented' }, 200)
  await check('a bad search', { url: '/search/signals?since=yesterday-ish' }, 400)
  await check('through the proxy', { url: `/sw/${board.authority}/sw/wire` }, 200)
  await check('the proxy, to no board', { url: '/sw/nowhere.example/sw/wire' }, 404)
  await check('discovery', { url: '/.well-known/wire-aggregator' }, 200)
  await check('the document', { url: '/openapi.json' }, 200)
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }
  const mcp = { accept: 'application/json, text/event-stream' }
  await check(
    'MCP',
    { method: 'POST', url: '/mcp', headers: mcp, payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: init } },
    200,
  )
  await check('MCP GET', { url: '/mcp' }, 405)
  await check('MCP DELETE', { method: 'DELETE', url: '/mcp' }, 405)
  await check('remove without the admin token', { method: 'DELETE', url: `/registry/boards/${board.authority}`, headers: auth() }, 401)
  await check('block', { method: 'POST', url: '/registry/blocked', headers: admin, payload: { authority: 'blocked.example' } }, 201)
  await check('unblock', { method: 'DELETE', url: '/registry/blocked/blocked.example', headers: admin }, 204)
  await check('unblock again', { method: 'DELETE', url: '/registry/blocked/blocked.example', headers: admin }, 404)
  await check('remove', { method: 'DELETE', url: `/registry/boards/${board.authority}`, headers: admin }, 204)
  await check('liveness', { url: '/' }, 200)
  await check('healthz', { url: '/healthz' }, 200)
  await check('readyz', { url: '/readyz' }, 200)
  await check('metrics', { url: '/metrics' }, 200)
  exercisedAll()

  const { tools } = (await legacy(agg.url, 'tools/list')).json.result
  const params = (path: string) => doc.paths[path].get.parameters.map((p: { name: string }) => p.name).sort()
  for (const [tool, path] of [
    ['search_signals', '/search/signals'],
    ['list_boards', '/registry/boards'],
  ] as const)
    t.same(
      Object.keys(tools.find((x: { name: string }) => x.name === tool).inputSchema.properties).sort(),
      params(path),
      `${tool} takes the parameters of GET ${path}`,
    )
})

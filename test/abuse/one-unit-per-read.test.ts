import { randomUUID } from 'node:crypto'
import t from 'tap'
import { startTestAggregator, startTestBoard } from '../aggregator/support.js'

/**
 * A read costs exactly one unit of the address's request budget on every surface: with a budget of
 * BUDGET requests, BUDGET reads pass and the next is refused. A surface that spent two units a read
 * (the HTTP door's hook and the read door behind it, say) is refused at read BUDGET / 2 + 1.
 */
const BUDGET = 4
// not a test of shedding: a loaded machine's event-loop delay must not turn a read into a 503
const env = { READ_RATE_LIMIT_MAX: String(BUDGET), READ_RATE_LIMIT_WINDOW_MS: '3600000', TRUST_PROXY: '1', SHED_EVENT_LOOP_DELAY_MS: '0' }
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
const a2aRead = rpc('message/send', {
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data: { limit: 1 } }] },
})

/** Whether an answer is the budget's refusal, whatever the surface wraps it in (HTTP 429, or a JSON-RPC/tool error carrying rate_limited). */
const refused = (status: number, body: string) => status === 429 || body.includes('rate_limited')

t.test('a read spends one unit of the request budget on every surface', async (t) => {
  const board = await startTestBoard(t, env)
  const agg = await startTestAggregator(t, env)
  t.equal((await agg.register(board.url)).status, 201, 'the board is registered with the aggregator')
  const app = board.board().app
  const aggApp = agg.started().app
  let n = 0
  const address = () => `198.51.100.${++n}` // a surface's reads come from an address of their own

  const surfaces: Array<[string, (ip: string) => Promise<{ status: number; body: string }>]> = [
    [
      'HTTP (fastify): GET /sw/signals/{id}',
      (ip) =>
        app
          .inject({ url: '/sw/signals/nosuchsignal00000000', remoteAddress: ip })
          .then((r) => ({ status: r.statusCode === 404 ? 200 : r.statusCode, body: r.body })),
    ],
    [
      'HTTP (fast path): GET /sw/signals over a socket',
      async (ip) => {
        const r = await fetch(`${board.url}/sw/signals?limit=1`, { headers: { 'x-forwarded-for': ip } })
        return { status: r.status, body: await r.text() }
      },
    ],
    [
      'MCP read_signals',
      (ip) =>
        app
          .inject({
            method: 'POST',
            url: '/mcp',
            remoteAddress: ip,
            headers: mcpHeaders,
            payload: rpc('tools/call', { name: 'read_signals', arguments: { limit: 1 } }),
          })
          .then((r) => ({ status: r.statusCode, body: r.body })),
    ],
    [
      'MCP events/poll (the Events extension)',
      (ip) =>
        app
          .inject({
            method: 'POST',
            url: '/mcp',
            remoteAddress: ip,
            headers: mcpHeaders,
            payload: rpc('events/poll', { name: 'signal.published', cursor: '0', maxEvents: 1 }),
          })
          .then((r) => ({ status: r.statusCode, body: r.body })),
    ],
    [
      'A2A read-signals',
      (ip) =>
        app
          .inject({ method: 'POST', url: '/a2a', remoteAddress: ip, headers: { 'content-type': 'application/json' }, payload: a2aRead })
          .then((r) => ({ status: r.statusCode, body: r.body })),
    ],
    [
      "the aggregator's proxy",
      (ip) =>
        aggApp
          .inject({ url: `/sw/${board.authority}/sw/signals?limit=1`, remoteAddress: ip })
          .then((r) => ({ status: r.statusCode, body: r.body })),
    ],
    [
      "the aggregator's MCP search_signals",
      (ip) =>
        aggApp
          .inject({
            method: 'POST',
            url: '/mcp',
            remoteAddress: ip,
            headers: mcpHeaders,
            payload: rpc('tools/call', { name: 'search_signals', arguments: { q: 'anything' } }),
          })
          .then((r) => ({ status: r.statusCode, body: r.body })),
    ],
  ]
  for (const [name, read] of surfaces) {
    const ip = address()
    for (let i = 1; i <= BUDGET; i++) {
      const r = await read(ip)
      t.notOk(refused(r.status, r.body), `${name}: read ${i} of ${BUDGET} passes`)
      t.equal(r.status, 200, `${name}: read ${i} answers 200`)
    }
    const over = await read(ip)
    t.ok(refused(over.status, over.body), `${name}: read ${BUDGET + 1} is refused`)
  }
})

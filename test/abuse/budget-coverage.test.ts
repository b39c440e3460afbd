import t from 'tap'
import { startStack } from '../helpers/stack.js'

// Every entry point spends its caller's budget at one door, before work. The board's address
// budgets are spent first (a request, a publish attempt, a registration); then every route in the
// route table, every MCP method and tool, every A2A method, the publish paths that fail early and
// an admin call must be refused with 429, unless this file lists it as free on purpose, with why.

const SPENDER = '198.51.100.77'

/** Free on purpose (method + url as registered), and why. */
const FREE: Record<string, string> = {
  'GET /': 'liveness: the orchestrator probes from one address per node; answers a constant',
  'HEAD /': 'liveness (HEAD)',
  'GET /healthz': 'liveness: as /',
  'HEAD /healthz': 'liveness (HEAD)',
  'GET /readyz': 'readiness: the orchestrator must never be refused; one check per second answers every probe (health.ts)',
  'HEAD /readyz': 'readiness (HEAD)',
  'OPTIONS *': 'CORS preflight: answered by the CORS hook with headers only, before any route runs',
}

const concrete = (url: string) => url.replace(/:[A-Za-z]+/g, 'x').replace(/\*$/, 'AAAAAAAAAAAAAAAAAAAA')

t.test('with its budgets spent, an address is refused at every door', async (t) => {
  const routes: Array<{ method: string; url: string }> = []
  const s = await startStack(t, {
    env: { READ_RATE_LIMIT_MAX: '1', PUBLISH_ATTEMPT_RATE_LIMIT_MAX: '1', REGISTER_RATE_LIMIT_MAX: '1' },
    onRoute: (r) => {
      for (const m of [r.method].flat()) routes.push({ method: m, url: r.url })
    },
  })
  const call = (method: string, url: string, o: { payload?: string; headers?: Record<string, string> } = {}) =>
    s.app.inject({
      method: method as 'GET',
      url,
      remoteAddress: SPENDER,
      headers: { 'content-type': 'application/json', ...s.bearer('spender-agent-token'), ...o.headers },
      ...(o.payload !== undefined && { payload: o.payload }),
    })
  // spend: one request, one publish attempt
  t.equal((await call('GET', '/sw/signals')).statusCode, 200)
  t.equal((await call('POST', '/sw/signals', { payload: '{"$type":"broadcast"}' })).statusCode, 200)

  t.ok(routes.length > 30, `${routes.length} routes registered`)
  const free: string[] = []
  for (const r of routes) {
    const key = `${r.method} ${r.url}`
    const res = await call(
      r.method,
      concrete(r.url),
      r.method === 'GET' || r.method === 'HEAD' || r.method === 'OPTIONS' ? {} : { payload: '{}' },
    )
    if (FREE[key]) {
      free.push(key)
      t.not(res.statusCode, 429, `${key} is free: ${FREE[key]}`)
      continue
    }
    t.equal(res.statusCode, 429, `${key} is refused`)
  }
  t.same(
    free.sort(),
    Object.keys(FREE)
      .filter((k) => routes.some((r) => `${r.method} ${r.url}` === k))
      .sort(),
    'every free entry is a real route',
  )

  // the publish paths that fail early: each refused before its work (auth, JSON, replay, $refId probe)
  const early: Array<[string, { payload: string; headers?: Record<string, string> }]> = [
    ['no token', { payload: '{"$type":"broadcast"}', headers: { authorization: '' } }],
    ['invalid JSON', { payload: '{' }],
    ['no $type', { payload: '{}' }],
    ['an Idempotency-Key replay', { payload: '{"$type":"broadcast"}', headers: { 'idempotency-key': 'k-1' } }],
    ['a $refId probe', { payload: '{"$type":"reply","$refId":"AAAAAAAAAAAAAAAAAAAA"}' }],
  ]
  for (const [what, o] of early) t.equal((await call('POST', '/sw/signals', o)).statusCode, 429, `publish with ${what} is refused`)

  // MCP: every method, every tool (each POST is refused at the door, before a server is built)
  const rpc = (method: string, params: object = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  const mcp = { accept: 'application/json, text/event-stream' }
  const tools = ['wire_info', 'read_signals', 'get_signal', 'read_thread', 'publish_signal', 'register_identity']
  for (const body of [
    rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } }),
    rpc('tools/list'),
    rpc('ping'),
    ...tools.map((name) => rpc('tools/call', { name, arguments: { id: 'x', signal: { $type: 'broadcast' } } })),
  ])
    t.equal((await call('POST', '/mcp', { payload: body, headers: mcp })).statusCode, 429, `MCP ${body.slice(0, 60)}… is refused`)
  // A2A: every method
  for (const method of ['message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/list', 'SendMessage', 'GetTask'])
    t.equal((await call('POST', '/a2a', { payload: rpc(method) })).statusCode, 429, `A2A ${method} is refused`)
  // admin: refused before the token is looked at
  t.equal(
    (await call('GET', '/sw/admin/wire', { headers: { authorization: 'Bearer wrong-admin-token' } })).statusCode,
    429,
    'an admin call is refused',
  )
})

t.test('failed admin authentications are budgeted, and the right token is never locked out', async (t) => {
  const s = await startStack(t, { env: { ADMIN_FAILURE_RATE_LIMIT_MAX: '2' } })
  const shared = '198.51.100.88' // the operator and an attacker behind one NAT
  const admin = (token: string, ip = shared) =>
    s.app.inject({ url: '/sw/admin/wire', remoteAddress: ip, headers: { authorization: `Bearer ${token}` } }).then((r) => r.statusCode)
  t.equal(await admin('admin-secret-token'), 200)
  t.equal(await admin('guess-number-one'), 401)
  t.equal(await admin('guess-number-two'), 401)
  t.equal(await admin('guess-number-three'), 429, 'past the budget, a wrong token from that address is refused')
  t.equal(await admin('guess-number-four'), 429, 'and so is the next one')
  t.equal(await admin('admin-secret-token'), 200, 'the right token from the same address still works')
  t.equal(await admin('guess-number-five'), 429, 'and using it does not reopen guessing')
  t.equal(await admin('guess-number-one', '198.51.100.89'), 401, 'another address has its own budget')
})

t.test('register_identity is budgeted per address', async (t) => {
  const s = await startStack(t, { env: { REGISTER_RATE_LIMIT_MAX: '1' } })
  const register = async () => {
    const r = await s.app.inject({
      method: 'POST',
      url: '/mcp',
      remoteAddress: '198.51.100.99',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'register_identity', arguments: {} } }),
    })
    return r.json().result
  }
  t.equal((await register()).isError, undefined, 'the first registration')
  const second = await register()
  t.equal(second.isError, true)
  t.equal(JSON.parse(second.content[0].text).error.code, 'rate_limited', 'the second is refused')
})

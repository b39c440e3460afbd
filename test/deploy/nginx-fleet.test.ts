import { execFileSync } from 'node:child_process'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { bossSchemaName } from '../../libs/shared/db/index.js'
import { LIMITS } from '../../libs/shared/domain/index.js'
import { fleetSchema, startReplica, startRole, type Role } from '../helpers/fleet.js'
import { freePort } from '../helpers/process.js'
import { dropSchema } from '../helpers/services.js'
import { eventually, until } from '../helpers/wait.js'
import { route, type RouteSpec } from './gateway.js'
import { fillServer, fillUpstreams, readNginx, requestFrom, startNginx } from './nginx.js'
import { render } from './render.js'
import { containerEnv } from './roles.js'
import { BASE_DIR, find, sample } from './support.js'
import { MCP_MAX_WAIT } from '../../libs/shared/mcp/index.js'

// deploy/nginx/wire-fleet.conf, as shipped, in front of a real fleet started with the manifests'
// settings: a writer, two readers on a streaming replica, agents, a sweeper. Every request's role
// is read from nginx's own log (the upstream it reached) and, where a role counts it, from that
// role's /metrics. Two 25 s long-polls (HTTP and MCP) run while everything else is checked.

t.setTimeout(180_000)
const TOKEN = 'nginx-fleet-token'
const NEVER = 'never-published-tag'
const rs = render(BASE_DIR)
const ROUTE: RouteSpec = find(rs, 'HTTPRoute', 'wire').spec
const SERVICE_ROLE: Record<string, string> = { 'wire-writer': 'writer', 'wire-reader': 'reader', 'wire-agents': 'agents' }

t.test('the fleet behind the shipped nginx configuration', async (t) => {
  const schema = fleetSchema(t)
  t.teardown(() => dropSchema(bossSchemaName(schema))) // the sweeper's pg-boss schema
  const envOf = (deployment: string, extra: Record<string, string> = {}) => {
    const { SERVER_PORT: _, ...env } = containerEnv(rs, deployment) // startRole picks a free port
    // behind nginx: one proxy hop; a small per-address publish budget to see which address Wire budgets by
    return { ...env, WIRE_PG_SCHEMA: schema, TRUST_PROXY: '1', PUBLISH_ADDRESS_RATE_LIMIT_MAX: '6', ...extra }
  }
  // the writer migrates the schema while the replica is cloned; the others start on both
  const [replica, writer] = await Promise.all([startReplica(t), startRole(t, 'writer', envOf('wire-writer'))])
  const onReplica = { DATABASE_REPLICA_URL: replica.url }
  const [readerA, readerB, agents, sweeper] = await Promise.all([
    startRole(t, 'reader', envOf('wire-reader', onReplica)),
    startRole(t, 'reader', envOf('wire-reader', onReplica)),
    startRole(t, 'agents', envOf('wire-agents', onReplica)),
    startRole(t, 'sweeper', envOf('wire-sweeper')),
  ])
  const portOf = (r: Role) => Number(new URL(r.url).port)
  const roleAt = new Map<string, string>([
    [`127.0.0.1:${portOf(writer)}`, 'writer'],
    [`127.0.0.1:${portOf(readerA)}`, 'reader'],
    [`127.0.0.1:${portOf(readerB)}`, 'reader'],
    [`127.0.0.1:${portOf(agents)}`, 'agents'],
    [`127.0.0.1:${portOf(sweeper)}`, 'sweeper'],
  ])

  const port = await freePort()
  const upstreams = fillUpstreams(readNginx('wire-fleet-upstreams.conf'), {
    wire_writers: [portOf(writer)],
    wire_readers: [portOf(readerA), portOf(readerB)],
    wire_polls: [portOf(readerA), portOf(readerB)],
    wire_agents: [portOf(agents)],
  })
  const nginx = await startNginx(t, [upstreams, fillServer(readNginx('wire-fleet.conf'), { http: port })], port)
  const base = `http://127.0.0.1:${port}`
  /** The roles nginx sent a request to (every upstream tried), from its log line (written as the response ends). */
  const rolesFor = async (method: string, uri: string) => {
    const lines = () => nginx.log().filter((x) => x.method === method && x.uri === uri)
    await until(() => lines().length > 0, 5000, `nginx's log line for ${method} ${uri}`)
    const e = lines()
    if (e.length !== 1) throw new Error(`${e.length} log lines for ${method} ${uri}`)
    return { ...e[0]!, roles: [...new Set(e[0]!.upstreams.map((u) => roleAt.get(u) ?? `unknown ${u}`))] }
  }
  const metric = async (r: Role, name: string, labels?: Record<string, string>) =>
    sample(await (await fetch(`${r.url}/metrics`)).text(), name, labels) ?? 0

  // the two long-polls first, on a tag nothing carries, so they wait their full 25 s while the rest runs
  const head = ((await (await fetch(`${base}/sw/signals?limit=1`)).json()) as { nextCursor: number }).nextCursor
  const pollUri = `/sw/signals?cursor=${head}&wait=${LIMITS.maxWaitSeconds}&tag=${NEVER}`
  const t0 = Date.now()
  const httpPoll = fetch(`${base}${pollUri}`).then(async (r) => ({ status: r.status, body: (await r.json()) as any, ms: Date.now() - t0 }))
  const mcp = new Client({ name: 'nginx-test', version: '1.0.0' })
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
  )
  t.teardown(() => mcp.close())
  const t1 = Date.now()
  const mcpPoll = mcp
    .callTool({ name: 'read_signals', arguments: { cursor: head, wait: LIMITS.maxWaitSeconds, tag: NEVER } })
    .then((r) => ({ body: JSON.parse((r.content as Array<{ text: string }>)[0]!.text), isError: r.isError === true, ms: Date.now() - t1 }))
  await until(
    async () => (await metric(readerA, 'wire_waiting_pollers')) + (await metric(readerB, 'wire_waiting_pollers')) === 1,
    10_000,
    'the HTTP long-poll to wait on a reader',
  )
  await until(
    async () => (await metric(agents, 'wire_waiting_pollers')) === 1,
    10_000,
    'the MCP read_signals to wait on the agents process',
  )

  await t.test('each method and path reaches the role the HTTPRoute names', async (t) => {
    const cases: Array<[string, string]> = [
      ['GET', '/sw/signals'],
      ['HEAD', '/sw/signals'],
      ['OPTIONS', '/sw/signals'],
      ['GET', '/'],
      ['GET', '/view'],
      ['GET', '/.well-known/wire'],
      ['GET', '/sw/v1/signals/abc/thread'],
      ['GET', '/healthz'],
      ['GET', '/readyz'],
      ['POST', '/sw/signals'],
      ['POST', '/sw/v1/signals'],
      ['PATCH', '/sw/v1/admin/wire'],
      ['DELETE', '/sw/admin/signals/abc'],
      ['GET', '/sw/admin/wire'],
      ['GET', '/sw/v1/admin/rules'],
      ['GET', '/sw/admin'],
      ['GET', '/sw/adminx'],
      ['POST', '/mcp'],
      ['GET', '/mcp'],
      ['OPTIONS', '/a2a'],
      ['POST', '/a2a'],
      ['GET', '/a2a/x'],
      ['GET', '/mcpx'],
      ['GET', '/.well-known/agent-card.json'],
      ['POST', '/.well-known/agent-card.json'],
      ['PUT', '/sw/signals'],
      ['PATCH', '/sw/signals/abc'],
      ['DELETE', '/sw/signals/abc'],
    ]
    let n = 0
    for (const [method, path] of cases) {
      const uri = `${path}?case=${n++}`
      const res = await fetch(`${base}${uri}`, { method })
      await res.arrayBuffer()
      const want = SERVICE_ROLE[route(ROUTE, method, path)!.backends[0]!]
      t.same((await rolesFor(method, uri)).roles, [want], `${method} ${path} → ${want} (${res.status})`)
    }
  })

  await t.test('publishes reach the writer, reads the readers, MCP and the agent card the agents', async (t) => {
    const before = await metric(writer, 'wire_publishes_total', { code: '200' })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}/sw/signals?n=${i}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ $type: 'broadcast', text: `via nginx ${i}` }),
      })
      t.equal(res.status, 200, `publish ${i}`)
      ids.push(((await res.json()) as any).signal.id)
      t.same((await rolesFor('POST', `/sw/signals?n=${i}`)).roles, ['writer'])
    }
    t.equal((await metric(writer, 'wire_publishes_total', { code: '200' })) - before, 3, "the writer's own count saw the 3 publishes")
    const page = (await (await fetch(`${base}/sw/signals?cursor=${head}&limit=10&r=1`)).json()) as any
    t.same(
      page.signals.map((s: any) => s.id),
      ids,
      'a reader on the replica serves them',
    )
    t.same((await rolesFor('GET', `/sw/signals?cursor=${head}&limit=10&r=1`)).roles, ['reader'])

    const published = await mcp.callTool({ name: 'publish_signal', arguments: { signal: { $type: 'broadcast', text: 'via mcp' } } })
    const id = JSON.parse((published.content as Array<{ text: string }>)[0]!.text).signal.id
    t.ok(
      await eventually(async () => (await fetch(`${base}/sw/signals/${id}`)).status === 200),
      'published through MCP, read through a reader (once the replica has it)',
    )
    const mcpLines = nginx.log().filter((e) => e.uri === '/mcp')
    t.ok(
      mcpLines.length >= 2 && mcpLines.every((e) => e.upstreams.every((u) => roleAt.get(u) === 'agents')),
      `${mcpLines.length} MCP requests, all to agents`,
    )
    const card = await fetch(`${base}/.well-known/agent-card.json`)
    t.equal(card.status, 200)
    t.match(await card.json(), { name: String, skills: Array })
    const admin = await fetch(`${base}/sw/admin/wire?a=1`, { headers: { authorization: 'Bearer admin-secret-token' } })
    t.equal(admin.status, 200, 'the admin API answers with the admin token')
    t.same((await rolesFor('GET', '/sw/admin/wire?a=1')).roles, ['writer'])
    t.notOk(
      nginx.log().some((e) => e.upstreams.some((u) => roleAt.get(u) === 'sweeper')),
      'nothing is routed to the sweeper',
    )
  })

  await t.test("the feed's polls stay on the readers' fast path after other reads", async (t) => {
    // Any other request on a connection to a reader moves that connection to the reader's general HTTP
    // server for good, and nginx reuses the connection it freed last. So each poll here follows other
    // reads: with one pool for both, the polls would ride the connections those reads moved.
    const served = async () =>
      (await metric(readerA, 'wire_fast_path_requests_total', { outcome: 'served' })) +
      (await metric(readerB, 'wire_fast_path_requests_total', { outcome: 'served' }))
    const before = await served()
    const polls = 8
    for (let i = 0; i < polls; i++) {
      for (const path of ['/sw/stats', '/.well-known/wire', `/sw/signals/none-${i}`])
        await (await fetch(`${base}${path}?other=${i}`)).arrayBuffer()
      const res = await fetch(`${base}/sw/signals?limit=1&fast=${i}`)
      t.equal(res.status, 200)
      await res.arrayBuffer()
      t.same((await rolesFor('GET', `/sw/signals?limit=1&fast=${i}`)).roles, ['reader'])
    }
    t.equal((await served()) - before, polls, `all ${polls} polls served by the readers' fast path`)
  })

  await t.test('/metrics is refused on the public side, served on each role port', async (t) => {
    for (const [method, path] of [
      ['GET', '/metrics'],
      ['GET', '/metrics/'],
      ['GET', '//metrics'],
      ['GET', '/metrics?x=1'],
      ['GET', '/%6detrics'],
      ['POST', '/metrics'],
    ] as Array<[string, string]>) {
      const res = await fetch(`${base}${path}`, { method })
      const body = await res.text()
      t.equal(res.status, 404, `${method} ${path}: 404`)
      t.match(JSON.parse(body), { error: { code: 'not_found' } }, 'a JSON error')
      t.same((await rolesFor(method, path)).upstreams, [], 'answered by nginx itself')
    }
    for (const r of [writer, readerA, agents, sweeper])
      t.equal((await fetch(`${r.url}/metrics`)).status, 200, 'a scrape of the role port works')
  })

  await t.test('nginx keeps connections to the roles alive', async (t) => {
    const held = (p: number) =>
      execFileSync('ss', ['-Htnp', 'state', 'established', `( dport = :${p} )`], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('"nginx"')).length
    t.ok(held(portOf(writer)) >= 1, 'an idle keep-alive connection to the writer stays open')
    t.ok(held(portOf(readerA)) + held(portOf(readerB)) >= 1, 'and to the readers')
  })

  await t.test('TRUST_PROXY=1: Wire budgets by the address nginx saw, whatever X-Forwarded-For a client sends', async (t) => {
    const publishFrom = (from: string, i: number) =>
      requestFrom(from, port, 'POST', `/sw/signals?from=${from}&i=${i}`, JSON.stringify({ $type: 'broadcast', text: `from ${from}` }), {
        authorization: `Bearer trust-${from}-${i}`, // a new identity each time: only the address budget applies
        'content-type': 'application/json',
        'x-forwarded-for': `198.51.100.${i}`,
      })
    for (let i = 0; i < 6; i++) t.equal((await publishFrom('127.0.0.2', i)).status, 200, `127.0.0.2 publish ${i + 1} of 6`)
    const over = await publishFrom('127.0.0.2', 6)
    t.equal(over.status, 429, 'the 7th from 127.0.0.2 is refused, though it claims yet another address')
    t.match(JSON.parse(over.body), { error: { code: 'rate_limited' } })
    t.equal((await publishFrom('127.0.0.3', 0)).status, 200, 'another client address has its own budget')
    t.equal((await rolesFor('POST', '/sw/signals?from=127.0.0.2&i=6')).client, '127.0.0.2', 'nginx saw the client address')
  })

  const [http, viaMcp] = await Promise.all([httpPoll, mcpPoll])
  const full = LIMITS.maxWaitSeconds * 1000 - 100
  t.equal(http.status, 200, 'the HTTP long-poll is answered, not cut')
  t.same(http.body.signals, [], 'with no signals (none carried the tag)')
  t.ok(http.body.nextCursor >= head, 'and a cursor to keep')
  t.ok(http.ms >= full, `after its full wait: ${http.ms} ms`)
  const logged = await rolesFor('GET', pollUri)
  t.same(logged.roles, ['reader'], 'on a reader')
  t.ok(logged.status === 200 && logged.seconds >= full / 1000, `nginx logged 200 after ${logged.seconds} s`)
  // a model-facing wait is clamped below MCP clients' deadlines (MCP_MAX_WAIT): its full wait is that
  const mcpFull = MCP_MAX_WAIT * 1000 - 100
  t.notOk(viaMcp.isError, 'the MCP read_signals is answered')
  t.same(viaMcp.body.signals, [])
  t.ok(viaMcp.ms >= mcpFull, `after its full (clamped) wait: ${viaMcp.ms} ms`)
  t.ok(
    nginx
      .log()
      .some((e) => e.uri === '/mcp' && e.seconds >= mcpFull / 1000 && e.status === 200 && roleAt.get(e.upstreams[0]!) === 'agents'),
    'nginx logged it: 200, from the agents',
  )
})

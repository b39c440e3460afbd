import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { route, type RouteSpec } from './gateway.js'
import { render } from './render.js'
import { containerEnv, deploySchema, roleOf, startRoleApp, type Role } from './roles.js'
import { BASE_DIR, byKind, containersOf, find, OVERLAY_DIR, sample } from './support.js'

// The manifests against the real apps: each role built as its main.ts builds it, with the settings
// the manifests give it, on this machine's PostgreSQL and Redis. The HTTPRoute must send every
// route to a role that serves it, and every probe and scrape path must answer.

const ROUTE: RouteSpec = find(render(BASE_DIR), 'HTTPRoute', 'wire').spec

t.test('the route matcher follows the Gateway API precedence (on a made-up route)', async (t) => {
  const spec: RouteSpec = {
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'any' }] },
      { matches: [{ method: 'POST', path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'post' }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/api' } }], backendRefs: [{ name: 'api' }] },
      { matches: [{ path: { type: 'Exact', value: '/api/x' } }], backendRefs: [{ name: 'exact' }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'later' }] },
    ],
  }
  const to = (m: string, p: string) => route(spec, m, p)?.backends[0]
  t.equal(to('GET', '/'), 'any', 'a tie goes to the first rule')
  t.equal(to('POST', '/'), 'post', 'a method match beats a bare prefix of the same length')
  t.equal(to('POST', '/api/y'), 'api', 'a longer prefix beats a method match')
  t.equal(to('GET', '/apix'), 'any', 'prefixes match whole path elements')
  t.equal(to('DELETE', '/api/x'), 'exact', 'an exact path beats everything')
  t.equal(
    route({ rules: [{ matches: [{ method: 'GET', path: { type: 'Exact', value: '/a' } }], backendRefs: [{ name: 'a' }] }] }, 'GET', '/b'),
    null,
    'nothing matches: 404',
  )
})

t.test("the HTTPRoute's intent, request by request", async (t) => {
  const cases: Array<[string, string, string]> = [
    ['GET', '/sw/signals', 'wire-reader'],
    ['HEAD', '/sw/signals', 'wire-reader'],
    ['GET', '/sw/v1/signals/abc/thread', 'wire-reader'],
    ['GET', '/.well-known/wire', 'wire-reader'],
    ['GET', '/', 'wire-reader'],
    ['GET', '/view', 'wire-reader'],
    ['GET', '/view/client/client/src/index.js', 'wire-reader'],
    ['OPTIONS', '/sw/signals', 'wire-reader'],
    ['POST', '/sw/signals', 'wire-writer'],
    ['POST', '/sw/v1/signals', 'wire-writer'],
    ['GET', '/sw/admin/wire', 'wire-writer'],
    ['PATCH', '/sw/v1/admin/wire', 'wire-writer'],
    ['DELETE', '/sw/admin/signals/abc', 'wire-writer'],
    ['GET', '/sw/v1/admin/rules', 'wire-writer'],
    ['POST', '/mcp', 'wire-agents'],
    ['GET', '/mcp', 'wire-agents'],
    ['OPTIONS', '/a2a', 'wire-agents'],
    ['POST', '/a2a', 'wire-agents'],
    ['GET', '/.well-known/agent-card.json', 'wire-agents'],
  ]
  for (const [method, path, backend] of cases) t.same(route(ROUTE, method, path)?.backends, [backend], `${method} ${path} → ${backend}`)
})

/** Every (method, url pattern) an app registers, as fastify's onRoute hook reports them. */
async function routesOf(app: FastifyInstance): Promise<Array<{ method: string; url: string }>> {
  const out: Array<{ method: string; url: string }> = []
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) out.push({ method, url: r.url })
  })
  await app.ready()
  return out
}

/** A request path for a route pattern: parameters and wildcards filled with a sample id. */
const concrete = (url: string) => url.replace(/:[A-Za-z]+/g, 'AbCdEfGhIjKlMnOpQrSt').replace(/\*$/, 'AbCdEfGhIjKlMnOpQrSt')

t.test('every route of the writer, reader and agents apps reaches a role that serves it; probe and scrape paths answer', async (t) => {
  const rs = render(OVERLAY_DIR)
  const schema = await deploySchema(t)
  const apps = {} as Record<Role, FastifyInstance>
  const routes = {} as Record<Role, Array<{ method: string; url: string }>>
  // the writer first: it migrates the schema, as the writers of a fresh board do
  for (const d of ['wire-writer', 'wire-reader', 'wire-agents', 'wire-sweeper']) {
    const role = roleOf(containersOf(find(rs, 'Deployment', d))[0])
    const { app } = await startRoleApp(t, role, containerEnv(rs, d), schema)
    routes[role] = await routesOf(app)
    apps[role] = app
  }
  const backendRole: Record<string, Role> = { 'wire-writer': 'writer', 'wire-reader': 'reader', 'wire-agents': 'agents' }

  let checked = 0
  for (const role of ['writer', 'reader', 'agents'] as const) {
    for (const r of routes[role]) {
      if (r.url === '*') continue // CORS preflights: every app answers them
      const to = route(ROUTE, r.method, concrete(r.url))
      const target = to && backendRole[to.backends[0]!]
      t.ok(
        target && apps[target].hasRoute({ method: r.method as 'GET', url: r.url }),
        `${role} ${r.method} ${r.url} → ${to?.backends.join(',') ?? '404'}`,
      )
      checked++
    }
  }
  t.ok(checked > 40, `${checked} routes checked`)
  t.ok(
    routes.agents.some((r) => r.method === 'GET' && r.url === '/.well-known/agent-card.json'),
    'the agent card is an agents route',
  )
  t.notOk(
    [...routes.reader, ...routes.writer].some((r) => r.url === '/.well-known/agent-card.json' || r.url === '/mcp'),
    'and neither readers nor writers serve the agent surfaces',
  )

  for (const d of byKind(rs, 'Deployment')) {
    const c = containersOf(d)[0]
    const app = apps[roleOf(c)]
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
      const res = await app.inject({ url: c[probe].httpGet.path })
      t.equal(res.statusCode, 200, `${d.metadata.name} ${probe} GET ${c[probe].httpGet.path}`)
    }
    const scrape = await app.inject({ url: d.spec.template.metadata.annotations['prometheus.io/path'] })
    t.equal(scrape.statusCode, 200, `${d.metadata.name} serves its scrape path`)
    t.match(scrape.headers['content-type'], /^text\/plain; version=0\.0\.4/, 'in the Prometheus text format')
    t.ok(sample(scrape.body, 'process_cpu_seconds_total') !== undefined, 'with the process metrics')
  }
  const readyz = await apps.reader.inject({ url: '/readyz' })
  t.match(readyz.json(), { ok: true }, 'a ready reader says so')
})

import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { parse } from 'yaml'
import { loadConfig } from '../../libs/shared/config/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { imageUser } from './dockerfile.js'
import { checkNginx, fillServer, readNginx, selfSigned } from './nginx.js'
import { render } from './render.js'
import { containerEnv, roleOf } from './roles.js'
import { BASE_DIR, byKind, containersOf, find } from './support.js'

// deploy/compose/compose.yaml cannot run here (no Docker engine), so it is checked against what
// can be: the Kubernetes manifests it mirrors (roles, command, environment, probes, shutdown,
// security), the code's settings, the shipped nginx files (nginx -t), and its own references.

const DIR = projectPath('deploy/compose')
const compose = parse(readFileSync(join(DIR, 'compose.yaml'), 'utf8'), { merge: true, uniqueKeys: true })
const services: Record<string, any> = compose.services
const dotenv = Object.fromEntries(
  readFileSync(join(DIR, 'env.example'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
)
const rs = render(BASE_DIR)
const deployments = byKind(rs, 'Deployment')

/** Compose's ${VAR}, ${VAR:-default}, ${VAR:?message} with env.example's values. */
const interpolate = (v: string) =>
  v.replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    if (name in dotenv) return dotenv[name]!
    if (op === '-') return arg!
    throw new Error(`\${${name}} is neither in env.example nor defaulted`)
  })
const roleServices = Object.entries(services).filter(([, s]) => s.command?.[0]?.startsWith('dist/apps/'))
const roleOfService = (s: any) => roleOf({ command: s.entrypoint, args: s.command })
const deploymentOf = (role: string) => deployments.find((d) => roleOf(containersOf(d)[0]) === role)!
const envOf = (s: any) =>
  Object.fromEntries(Object.entries(s.environment as Record<string, string>).map(([k, v]) => [k, interpolate(String(v))]))

// biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's own ${VARIABLE} syntax, named in the test's title
t.test('every ${VARIABLE} is in env.example or has a default; env.example holds placeholders', async (t) => {
  const used = [...readFileSync(join(DIR, 'compose.yaml'), 'utf8').matchAll(/\$\{([A-Z_]+)(:[-?])?/g)]
  for (const [, name, op] of used) t.ok(name! in dotenv || op === ':-', `${name}`)
  for (const k of ['POSTGRES_PASSWORD', 'REPLICATION_PASSWORD', 'SERVER_ADMIN_TOKEN', 'FINGERPRINT_SECRET'])
    t.match(dotenv[k], /^CHANGE_ME/, `${k} is a placeholder`)
})

t.test('the same roles as the manifests: one image, the same command', async (t) => {
  t.same(
    roleServices.map(([, s]) => roleOfService(s)).sort(),
    deployments.map((d) => roleOf(containersOf(d)[0])).sort(),
    'writer, reader, agents, sweeper',
  )
  t.equal(new Set(roleServices.map(([, s]) => s.image)).size, 1, 'one image for every role')
  for (const [name, s] of roleServices) t.same(s.build, { context: '../..' }, `${name}: built from the repository's Dockerfile`)
  const hpa = find(rs, 'HorizontalPodAutoscaler', 'wire-reader')
  t.ok(services.reader.deploy.replicas >= hpa.spec.minReplicas, `readers: ${services.reader.deploy.replicas}, at least the HPA's minimum`)
})

t.test("each role gets its Deployment's environment (and TRUST_PROXY, behind the router)", async (t) => {
  const configMap = find(rs, 'ConfigMap', 'wire-config').data!
  for (const [name, s] of roleServices) {
    const d = deploymentOf(roleOfService(s))
    const k8s = containerEnv(rs, d.metadata.name)
    const optional = (containersOf(d)[0].env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef?.optional).map((e: any) => e.name)
    const env = envOf(s)
    t.same(
      Object.keys(env).filter((k) => !(k in k8s)),
      ['TRUST_PROXY'],
      `${name}: nothing the Deployment lacks but TRUST_PROXY`,
    )
    t.same(
      Object.keys(k8s).filter((k) => !(k in env) && !optional.includes(k)),
      [],
      `${name}: nothing missing but optional secrets`,
    )
    for (const [k, v] of Object.entries(configMap))
      if (k !== 'PUBLIC_WIRE_HOST') t.equal(env[k], v, `${name} ${k}=${v} as in the ConfigMap`)
    for (const e of containersOf(d)[0].env ?? [])
      if (e.value !== undefined) t.equal(env[e.name], e.value, `${name} ${e.name}=${e.value} as in the Deployment`)
    const cfg = loadConfig(env)
    t.equal(cfg.db.kind, 'postgres', `${name}: its settings load, on PostgreSQL`)
    t.equal(cfg.http.trustProxy, 1, 'one proxy hop')
    const hosts = [env.DATABASE_URL, env.DATABASE_REPLICA_URL, env.REDIS_URL].filter(Boolean).map((u) => new URL(u!).hostname)
    for (const h of hosts) t.ok(h in services && h in (s.depends_on ?? {}), `${name} reaches ${h}, a service it waits for`)
    if ('DATABASE_REPLICA_URL' in k8s) t.equal(new URL(env.DATABASE_REPLICA_URL!).hostname, 'db-replica', `${name} reads from the replica`)
  }
})

t.test('probes: the readiness path on SERVER_PORT, the startup budget as start_period; the check runs', async (t) => {
  const seconds = (v: string) => Number(/^(\d+)s$/.exec(v)?.[1])
  for (const [name, s] of roleServices) {
    const c = containersOf(deploymentOf(roleOfService(s)))[0]
    const probe = c.readinessProbe
    const url = `http://127.0.0.1:${envOf(s).SERVER_PORT}${probe.httpGet.path}`
    t.same(s.healthcheck.test.slice(0, 3), ['CMD', 'node', '-e'], `${name}: node, in the image (it has no curl)`)
    t.ok(s.healthcheck.test[3].includes(`'${url}'`), `${name}: GET ${url}`)
    t.equal(seconds(s.healthcheck.interval), probe.periodSeconds, 'every readiness period')
    t.equal(seconds(s.healthcheck.timeout), probe.timeoutSeconds)
    t.equal(s.healthcheck.retries, probe.failureThreshold)
    t.ok(
      seconds(s.healthcheck.start_period) >= c.startupProbe.periodSeconds * c.startupProbe.failureThreshold,
      `start_period ${s.healthcheck.start_period}: the startup probe's budget`,
    )
  }
  let status = 200
  const server = createServer((req, res) => res.writeHead(req.url === '/readyz' ? status : 404).end()).listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  t.teardown(() => server.close())
  const port = (server.address() as { port: number }).port
  const check = () =>
    promisify(execFile)(process.execPath, ['-e', services.writer.healthcheck.test[3].replace(':4000/', `:${port}/`)]).then(
      () => 0,
      (e: { code: number }) => e.code,
    )
  t.equal(await check(), 0, 'the check passes on 200')
  status = 503
  t.equal(await check(), 1, 'and fails on 503')
})

t.test('shutdown and security as the Deployments have them', async (t) => {
  const uid = imageUser()
  const maxConnections = loadConfig({}).http.maxConnections
  for (const [name, s] of roleServices) {
    const spec = deploymentOf(roleOfService(s)).spec.template.spec
    t.ok(
      Number(/^(\d+)s$/.exec(s.stop_grace_period)?.[1]) >= spec.terminationGracePeriodSeconds,
      `${name}: stop_grace_period ${s.stop_grace_period}`,
    )
    t.equal(s.user, `${uid.uid}:${uid.gid}`, "the image's non-root user")
    t.equal(s.read_only, true, 'read-only root filesystem')
    t.same(s.cap_drop, ['ALL'])
    t.same(s.security_opt, ['no-new-privileges:true'])
    t.ok(s.ulimits.nofile > maxConnections, 'room for HTTP_MAX_CONNECTIONS sockets')
    t.notOk(s.ports, 'no published port: only the router is public')
  }
})

t.test('the router: wire-fleet.conf as shipped, upstreams naming the role services', async (t) => {
  const r = services.router
  t.ok(r.volumes.includes('../nginx/wire-fleet.conf:/etc/nginx/conf.d/default.conf:ro'), 'the VM server block, replacing the image default')
  t.ok(r.volumes.includes('./nginx-upstreams.conf:/etc/nginx/conf.d/wire-upstreams.conf:ro'))
  t.same(
    Object.keys(services).filter((n) => services[n].ports),
    ['router'],
    'the only published port',
  )
  const upstreams = readFileSync(join(DIR, 'nginx-upstreams.conf'), 'utf8')
  const referenced = new Set(
    [...readNginx('wire-fleet.conf').matchAll(/(?:http:\/\/|(?:POST|PATCH|DELETE|GET|default) +)(wire_[a-z]+);/g)].map((m) => m[1]!),
  )
  const blocks = [...upstreams.matchAll(/upstream (\w+) \{([^}]*)\}/g)]
  t.same(blocks.map((b) => b[1]).sort(), [...referenced].sort(), 'an upstream for each group wire-fleet.conf names')
  for (const [, name, body] of blocks) {
    const [, host, port] = /server ([\w-]+):(\d+) resolve max_fails=0;/.exec(body!) ?? []
    const role = roleOfService(services[host!])
    t.equal(
      role,
      { wire_writers: 'writer', wire_readers: 'reader', wire_polls: 'reader', wire_agents: 'agents' }[name!],
      `${name} → service ${host}, running the ${role}`,
    )
    t.equal(port, envOf(services[host!]).SERVER_PORT, 'on its SERVER_PORT')
    t.match(body, /keepalive \d+;/, 'kept alive')
  }
  // nginx 1.22 here lacks `resolve` (1.27.3+, the image's 1.28 has it): everything else must load
  const local = upstreams
    .replace(/ resolve /g, ' ')
    .replace(/server [\w-]+:\d+ /g, 'server 127.0.0.1:4000 ')
    .replace(/^resolver .*$/m, '')
  t.doesNotThrow(() => checkNginx(t, [local, fillServer(readNginx('wire-fleet.conf'), { http: 8080 })]), 'nginx -t')
  const dir = mkdtempSync(join(tmpdir(), 'wire-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const tls = { port: 8443, ...selfSigned(dir) }
  t.doesNotThrow(
    () => checkNginx(t, [local, fillServer(readNginx('wire-fleet.conf'), { http: 8080, tls })]),
    'nginx -t, with the TLS lines on',
  )
})

t.test('the replica streams from the primary as the role the init script creates', async (t) => {
  const script = readFileSync(join(DIR, 'primary-init.sh'), 'utf8')
  t.match(script, /create role replicator with replication login/)
  t.match(script, /host replication replicator all scram-sha-256/)
  t.match(services['db-replica'].entrypoint.join(' '), /pg_basebackup -h db-primary -U replicator .*-R/)
  t.same(
    services['db-replica'].environment.PGPASSWORD,
    services['db-primary'].environment.REPLICATION_PASSWORD,
    'with the password the primary gives it',
  )
  t.ok(services['db-primary'].volumes.includes('./primary-init.sh:/docker-entrypoint-initdb.d/primary-init.sh:ro'))
})

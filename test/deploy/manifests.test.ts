import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { LIMITS } from '../../libs/shared/domain/index.js'
import { projectPath } from '../../libs/shared/paths.js'
import { imageUser } from './dockerfile.js'
import { render } from './render.js'
import { containerEnv, roleOf } from './roles.js'
import {
  BASE_DIR,
  byKind,
  containersOf,
  EXAMPLES_DIR,
  find,
  LARGE_DIR,
  loadYaml,
  OVERLAY_DIR,
  selects,
  settingNames,
  type Resource,
} from './support.js'
import { SHUTDOWN_GRACE_MS } from '../../libs/shared/lifecycle.js'

// Cross-references inside the manifests and between the manifests and the code: settings, ports,
// labels, backends, secrets, shutdown timing, security. (Paths are checked against the running
// apps in routes.test.ts; schemas in schema.test.ts.)

const SETTINGS = new Set(settingNames())
/** Variables Node itself reads (the large-board readers cap V8's young generation through NODE_OPTIONS). */
const NODE_READS = new Set(['NODE_OPTIONS'])
const rendered: Array<[string, Resource[]]> = [
  ['base', render(BASE_DIR)],
  ['overlay', render(OVERLAY_DIR)],
  ['large-board overlay', render(LARGE_DIR)],
]
const SECRET = loadYaml(`${EXAMPLES_DIR}/secret.example.yaml`)[0] as Resource

/** Kubernetes quantities as numbers (cores, bytes), for the forms the manifests use. */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi)?$/.exec(String(q))
  if (!m) throw new Error(`unparsed quantity ${q}`)
  const scale = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[m[2] ?? ''] ?? 1
  return Number(m[1]) * scale
}

t.test('the list of real settings is read correctly from libs/shared/config', async (t) => {
  for (const s of [
    'DATABASE_URL',
    'DATABASE_REPLICA_URL',
    'REDIS_URL',
    'SERVER_PORT',
    'SERVER_ADMIN_TOKEN',
    'WIRE_AUTO_MIGRATE',
    'LOG_LEVEL',
  ])
    t.ok(SETTINGS.has(s), s)
  const documented = [...readFileSync(projectPath('README.md'), 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!)
  t.ok(documented.length >= 25, `README documents ${documented.length} settings`)
  t.same(
    documented.filter((s) => !SETTINGS.has(s)),
    [],
    'every setting the README documents is in the schema as read',
  )
})

for (const [name, rs] of rendered) {
  t.test(`${name}: every env var is a real setting, and each role's settings load`, async (t) => {
    for (const d of byKind(rs, 'Deployment')) {
      const [c] = containersOf(d)
      const names = [...(c.env ?? []).map((e: { name: string }) => e.name), ...Object.keys(containerEnv(rs, d.metadata.name))]
      t.same(
        [...new Set(names)].filter((n) => !SETTINGS.has(n) && !NODE_READS.has(n)),
        [],
        `${d.metadata.name}: no variable the code (or Node) does not read`,
      )
      const cfg = loadConfig(containerEnv(rs, d.metadata.name)) // throws, naming every bad value
      t.equal(cfg.db.kind, 'postgres', `${d.metadata.name}: on PostgreSQL`)
      t.equal(c.ports.length, 1, 'one port')
      t.equal(c.ports[0].containerPort, cfg.port, `${d.metadata.name}: containerPort = SERVER_PORT (${cfg.port})`)
      t.equal(d.spec.template.metadata.annotations['prometheus.io/port'], String(cfg.port), 'prometheus.io/port is that port')
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'])
        t.equal(c[probe].httpGet.port, c.ports[0].name, `${probe} uses the named port`)
    }
    for (const key of Object.keys(find(rs, 'ConfigMap', 'wire-config').data!)) t.ok(SETTINGS.has(key), `ConfigMap key ${key} is a setting`)
  })
}

t.test('base: the ConfigMap states the code defaults, except the public host', async (t) => {
  const data = find(render(BASE_DIR), 'ConfigMap', 'wire-config').data!
  const fixed = { DATABASE_URL: 'postgres://x@db/wire', REDIS_URL: 'redis://redis:6379' }
  const defaults = loadConfig(fixed)
  for (const [key, value] of Object.entries(data)) {
    if (key === 'PUBLIC_WIRE_HOST') continue // deliberately set: the board's authority
    t.same(loadConfig({ ...fixed, [key]: value }), defaults, `${key}=${value} is the default`)
  }
  t.not(loadConfig({ ...fixed, PUBLIC_WIRE_HOST: data.PUBLIC_WIRE_HOST }).authority, defaults.authority, 'the public host is set')
  t.not(loadConfig({ ...fixed, READER_TAIL_SIZE: '4999' }).reader.tailSize, defaults.reader.tailSize, '(the comparison does see a change)')
})

for (const [name, rs] of rendered) {
  t.test(`${name}: selectors, ports and references line up`, async (t) => {
    const deployments = byKind(rs, 'Deployment')
    const podLabels = (d: Resource) => d.spec.template.metadata.labels
    for (const d of deployments)
      t.ok(selects(d.spec.selector.matchLabels, podLabels(d)), `${d.metadata.name}: its selector matches its pods`)
    for (const s of byKind(rs, 'Service')) {
      const hits = deployments.filter((d) => selects(s.spec.selector, podLabels(d)))
      t.equal(hits.length, 1, `Service ${s.metadata.name} selects exactly one Deployment`)
      const names = containersOf(hits[0]!).flatMap((c) => c.ports.map((p: { name: string }) => p.name))
      for (const p of s.spec.ports)
        t.ok(names.includes(p.targetPort), `Service ${s.metadata.name}: targetPort ${p.targetPort} is a container port`)
    }
    const route = find(rs, 'HTTPRoute', 'wire').spec
    for (const rule of route.rules) {
      for (const b of rule.backendRefs) {
        const svc = find(rs, 'Service', b.name)
        t.ok(
          svc.spec.ports.some((p: { port: number }) => p.port === b.port),
          `backend ${b.name}:${b.port} exists`,
        )
      }
      const seconds = Number(/^(\d+)s$/.exec(rule.timeouts.request)?.[1])
      t.ok(seconds > LIMITS.maxWaitSeconds + 5, `route timeout ${rule.timeouts.request} outlasts a ${LIMITS.maxWaitSeconds} s long-poll`)
    }
    for (const hpa of byKind(rs, 'HorizontalPodAutoscaler')) {
      const target = find(rs, hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name)
      t.equal(target.spec.replicas, undefined, `${target.metadata.name}: no replicas field for a re-apply to reset`)
      t.ok(hpa.spec.minReplicas >= 2, 'at least two readers')
    }
    for (const pdb of byKind(rs, 'PodDisruptionBudget'))
      t.equal(
        deployments.filter((d) => selects(pdb.spec.selector.matchLabels, podLabels(d))).length,
        1,
        `PDB ${pdb.metadata.name} covers one Deployment`,
      )
    const monitor = loadYaml(`${EXAMPLES_DIR}/podmonitor.yaml`)[0] as Resource
    for (const d of deployments) {
      t.ok(selects(monitor.spec.selector.matchLabels, podLabels(d)), `the PodMonitor scrapes ${d.metadata.name}`)
      t.ok(
        containersOf(d)[0].ports.some((p: { name: string }) => p.name === monitor.spec.podMetricsEndpoints[0].port),
        'on a port it has',
      )
    }
    for (const d of deployments)
      for (const c of d.spec.template.spec.topologySpreadConstraints)
        t.ok(selects(c.labelSelector.matchLabels, podLabels(d)), `${d.metadata.name}: spreads its own pods over ${c.topologyKey}`)
  })
}

t.test('roles, image and migrations', async (t) => {
  const rs = render(BASE_DIR)
  const images = new Set<string>()
  for (const d of byKind(rs, 'Deployment')) {
    const [c] = containersOf(d)
    const role = roleOf(c)
    t.ok(
      existsSync(projectPath(`apps/${role}/main.ts`)),
      `${d.metadata.name} runs dist/apps/${role}/main.js, built from apps/${role}/main.ts`,
    )
    t.equal(c.name, role, 'the container is named after its role')
    t.equal(d.spec.template.metadata.labels['app.kubernetes.io/component'], role, 'and labelled with it')
    images.add(c.image)
  }
  t.equal(images.size, 1, 'one image for every role')
  const cfg = (d: string) => loadConfig(containerEnv(rs, d))
  t.equal(cfg('wire-writer').autoMigrate, true, 'writers migrate (under an advisory lock)')
  // readers, agents and sweepers never migrate whatever WIRE_AUTO_MIGRATE says: their start functions open no migration
  for (const role of ['reader', 'agents', 'sweeper'])
    t.notMatch(readFileSync(projectPath(`apps/${role}/app.ts`), 'utf8'), /migrate:/, `apps/${role}/app.ts never migrates`)
  t.match(
    readFileSync(projectPath('libs/shared/context/index.ts'), 'utf8'),
    /migrate: roles\.has\('writer'\) && cfg\.autoMigrate/,
    'the writer migrates as WIRE_AUTO_MIGRATE says (the root)',
  )
  const readerEnv = containersOf(find(rs, 'Deployment', 'wire-reader'))[0].env
  t.match(
    readerEnv,
    [{ name: 'DATABASE_REPLICA_URL', valueFrom: { secretKeyRef: { key: 'DATABASE_REPLICA_URL' } } }],
    'readers read from the replica',
  )
  const agentsEnv = containersOf(find(rs, 'Deployment', 'wire-agents'))[0].env
  t.match(
    agentsEnv,
    [{ name: 'DATABASE_REPLICA_URL', valueFrom: { secretKeyRef: { key: 'DATABASE_REPLICA_URL' } } }],
    'agents read from the replica too',
  )
  t.notOk(
    containersOf(find(rs, 'Deployment', 'wire-writer'))[0].env.some((e: { name: string }) => e.name === 'DATABASE_REPLICA_URL'),
    'writers do not',
  )
})

t.test('secrets come from the Secret, and the example holds only placeholders', async (t) => {
  const rs = render(BASE_DIR)
  const keys = Object.keys(SECRET.stringData!)
  for (const d of byKind(rs, 'Deployment'))
    for (const e of containersOf(d)[0].env ?? []) {
      if (!e.valueFrom) continue
      t.equal(e.valueFrom.secretKeyRef.name, SECRET.metadata.name, `${d.metadata.name} ${e.name} from ${SECRET.metadata.name}`)
      t.ok(keys.includes(e.valueFrom.secretKeyRef.key), `the example Secret has ${e.valueFrom.secretKeyRef.key}`)
    }
  for (const [k, v] of Object.entries(SECRET.stringData!)) t.match(v, /CHANGE_ME/, `${k} is a placeholder`)
  const cm = find(rs, 'ConfigMap', 'wire-config').data!
  for (const k of ['DATABASE_URL', 'DATABASE_REPLICA_URL', 'REDIS_URL', 'SERVER_ADMIN_TOKEN', 'FINGERPRINT_SECRET'])
    t.notOk(k in cm, `${k} is not in the ConfigMap`)
})

t.test('shutdown: endpoints drain first, and Kubernetes waits longer than Wire does', async (t) => {
  const graceMs = SHUTDOWN_GRACE_MS
  t.ok(graceMs >= 10_000, `Wire's own shutdown grace: ${graceMs} ms (libs/shared/lifecycle.ts)`)
  for (const d of byKind(render(BASE_DIR), 'Deployment')) {
    const spec = d.spec.template.spec
    const [c] = spec.containers
    const pause = c.lifecycle?.preStop ? Number(c.lifecycle.preStop.exec.command[1]) : 0
    if (roleOf(c) !== 'sweeper') {
      t.same(c.lifecycle.preStop.exec.command.slice(0, 1), ['sleep'], `${d.metadata.name}: a preStop pause`)
      t.ok(pause >= 3 && pause <= 10, `of ${pause} s`)
    }
    t.ok(
      spec.terminationGracePeriodSeconds > pause + graceMs / 1000,
      `${d.metadata.name}: ${spec.terminationGracePeriodSeconds} s > ${pause} s + ${graceMs / 1000} s`,
    )
    t.ok(spec.terminationGracePeriodSeconds > LIMITS.maxWaitSeconds + pause, `and > the ${LIMITS.maxWaitSeconds} s long-poll + the pause`)
    if (d.spec.strategy)
      t.equal(d.spec.strategy.rollingUpdate.maxUnavailable, 0, `${d.metadata.name}: a rollout never drops below the wanted pods`)
  }
})

t.test('resources and security: requests and limits, non-root, read-only, no escalation', async (t) => {
  const uid = imageUser()
  t.ok(uid.uid > 0, `the image runs as uid ${uid.uid}`)
  for (const d of byKind(render(BASE_DIR), 'Deployment')) {
    const spec = d.spec.template.spec
    const [c] = spec.containers
    const name = d.metadata.name
    for (const r of ['cpu', 'memory']) {
      t.ok(c.resources.requests[r] && c.resources.limits[r], `${name}: ${r} request and limit`)
      t.ok(quantity(c.resources.requests[r]) <= quantity(c.resources.limits[r]), `${name}: ${r} request ≤ limit`)
    }
    t.match(
      spec.securityContext,
      { runAsNonRoot: true, runAsUser: uid.uid, runAsGroup: uid.gid, seccompProfile: { type: 'RuntimeDefault' } },
      `${name}: pod security`,
    )
    t.match(
      c.securityContext,
      { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      `${name}: container security`,
    )
    t.equal(spec.automountServiceAccountToken, false, `${name}: no API token (Wire never calls Kubernetes)`)
    t.ok(
      spec.topologySpreadConstraints.some((s: { topologyKey: string }) => s.topologyKey === 'kubernetes.io/hostname'),
      `${name}: spread over nodes`,
    )
  }
})

import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { projectPath } from '../../libs/shared/paths.js'
import { render } from './render.js'
import { BASE_DIR, find, LARGE_DIR, OVERLAY_DIR } from './support.js'

// deploy/k8s as `kubectl kustomize` renders it (render.ts): the base's objects, and the example
// overlay's changes applied. Schemas: schema.test.ts; cross-references: manifests.test.ts.

t.test('deploy/k8s: the base renders', async (t) => {
  const rs = render(BASE_DIR)
  t.same(rs.map((r) => `${r.kind}/${r.metadata.name}`).sort(), [
    'ConfigMap/wire-config',
    'Deployment/wire-agents',
    'Deployment/wire-reader',
    'Deployment/wire-sweeper',
    'Deployment/wire-writer',
    'HTTPRoute/wire',
    'HorizontalPodAutoscaler/wire-reader',
    'PodDisruptionBudget/wire-agents',
    'PodDisruptionBudget/wire-reader',
    'PodDisruptionBudget/wire-sweeper',
    'PodDisruptionBudget/wire-writer',
    'Service/wire-agents',
    'Service/wire-reader',
    'Service/wire-writer',
  ])
  t.notOk(
    rs.some((r) => r.kind === 'Secret'),
    'no Secret: credentials never come from git',
  )
})

t.test('deploy/k8s: the example overlay renders with its changes applied', async (t) => {
  const rs = render(OVERLAY_DIR)
  t.equal(rs.length, render(BASE_DIR).length, 'the overlay adds nothing but changes')
  t.ok(
    rs.every((r) => r.metadata.namespace === 'wire'),
    'everything in the wire namespace',
  )
  for (const d of rs.filter((r) => r.kind === 'Deployment'))
    t.equal(d.spec.template.spec.containers[0].image, 'registry.example.com/wire:0.1.0', `${d.metadata.name}: the built image`)
  t.equal(find(rs, 'Deployment', 'wire-writer').spec.replicas, 3)
  t.equal(find(rs, 'Deployment', 'wire-reader').spec.replicas, undefined, 'readers: the HPA decides')
  const cm = find(rs, 'ConfigMap', 'wire-config').data!
  t.equal(cm.PUBLIC_WIRE_HOST, 'board.example.com')
  t.equal(cm.SIGNAL_SWEEP_INTERVAL_SECONDS, '30')
  t.equal(cm.SERVER_PORT, '4000', 'the base keys stay')
  const route = find(rs, 'HTTPRoute', 'wire').spec
  t.same(route.parentRefs, [{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }], 'parentRefs replaced, not merged')
  t.same(route.hostnames, ['board.example.com'])
  t.equal(route.rules.length, 3, 'the rules stay')
  t.match(find(rs, 'HorizontalPodAutoscaler', 'wire-reader').spec, { minReplicas: 3, maxReplicas: 20, metrics: [{ type: 'Resource' }] })
})

t.test('deploy/k8s: the base carries the package version, on every object and in its images', async (t) => {
  const { version } = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }
  const rs = render(BASE_DIR)
  for (const r of rs) t.equal(r.metadata.labels?.['app.kubernetes.io/version'], version, `${r.kind}/${r.metadata.name}: version label`)
  for (const d of rs.filter((r) => r.kind === 'Deployment')) {
    t.equal(d.spec.template.metadata.labels['app.kubernetes.io/version'], version, `${d.metadata.name}: on its pods`)
    t.notOk(
      'app.kubernetes.io/version' in d.spec.selector.matchLabels,
      `${d.metadata.name}: not in its selector (an upgrade must not orphan pods)`,
    )
    t.equal(d.spec.template.spec.containers[0].image, `wire:${version}`, `${d.metadata.name}: image wire:${version}`)
  }
})

t.test('deploy/k8s: the large-board overlay renders readers scaled by waiting polls, spread and budgeted', async (t) => {
  const rs = render(LARGE_DIR)
  t.same(
    rs.map((r) => `${r.kind}/${r.metadata.name}`).sort(),
    render(BASE_DIR)
      .map((r) => `${r.kind}/${r.metadata.name}`)
      .sort(),
    'changes only',
  )
  t.ok(rs.every((r) => r.metadata.namespace === 'wire'))
  const hpa = find(rs, 'HorizontalPodAutoscaler', 'wire-reader').spec
  t.match(hpa, { scaleTargetRef: { name: 'wire-reader' }, minReplicas: 20, maxReplicas: 140 })
  t.match(hpa.metrics, [
    { type: 'Resource', resource: { name: 'cpu' } },
    { type: 'Pods', pods: { metric: { name: 'wire_waiting_pollers' }, target: { type: 'AverageValue', averageValue: '10000' } } },
  ])
  t.equal(hpa.metrics.length, 2, 'the list replaced, not appended to')
  t.match(hpa.behavior.scaleDown, { policies: [{ type: 'Percent', value: 5 }] })
  const cfg = find(rs, 'ConfigMap', 'wire-config').data!
  t.match(cfg, { TRUST_PROXY: '1', READER_MAX_WAITERS: '20000', SERVER_PORT: '4000' })
  t.ok(
    Number(cfg.READER_MAX_WAITERS) >= 2 * Number(hpa.metrics[1].pods.target.averageValue),
    'the waiter cap leaves room above the HPA target',
  )
  const reader = find(rs, 'Deployment', 'wire-reader').spec.template.spec
  t.equal(reader.topologySpreadConstraints.length, 2, 'the base list replaced')
  t.match(reader.topologySpreadConstraints, [
    { topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
    { topologyKey: 'kubernetes.io/hostname' },
  ])
  t.match(reader.containers[0], {
    name: 'reader',
    args: ['dist/apps/reader/main.js'],
    resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { memory: '1Gi' } },
  })
  t.ok(reader.containers[0].readinessProbe, 'the base container is patched, not replaced')
  const env = reader.containers[0].env as Array<{ name: string; value?: string }>
  t.match(
    env.find((e) => e.name === 'READER_SEMI_SPACE_MB'),
    { value: '16' },
    'readers cap their young generation at 16 MB semi-spaces',
  )
  t.notOk(
    env.find((e) => e.name === 'NODE_OPTIONS'),
    'through the setting, not NODE_OPTIONS (whose size would win over it)',
  )
  t.ok(
    env.some((e) => e.name === 'DATABASE_REPLICA_URL'),
    "the base's env merged with, not replaced",
  )
  t.equal(find(rs, 'PodDisruptionBudget', 'wire-reader').spec.maxUnavailable, '10%')
  t.equal(find(rs, 'PodDisruptionBudget', 'wire-writer').spec.maxUnavailable, 1, 'the other budgets stay')
})

t.test('deploy/k8s: the base and the overlays can be referenced remotely, at a tag', async (t) => {
  // a git repository holding deploy/ as committed at a release tag, referenced the way a remote one is
  const { version } = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string }
  const repo = mkdtempSync(join(tmpdir(), 'wire-remote-'))
  const user = mkdtempSync(join(tmpdir(), 'wire-user-'))
  t.teardown(() => (rmSync(repo, { recursive: true, force: true }), rmSync(user, { recursive: true, force: true })))
  cpSync(projectPath('deploy'), join(repo, 'deploy'), { recursive: true })
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=wire', '-c', 'user.email=wire@example.com', ...args], { cwd: repo, stdio: 'ignore' })
  git('init', '-q')
  git('add', '-A')
  git('commit', '-qm', 'release')
  git('tag', `v${version}`)
  for (const [path, local] of [
    ['deploy/k8s/base', BASE_DIR],
    ['deploy/k8s/overlays/large-board', LARGE_DIR],
  ] as const) {
    writeFileSync(join(user, 'kustomization.yaml'), `resources:\n  - file://${repo}//${path}?ref=v${version}\n`)
    t.same(render(user), render(local), `${path} at v${version} renders as the local copy does`)
  }
})

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { merge, render, Unsupported } from './kustomize.js'
import { BASE_DIR, find, OVERLAY_DIR, type Resource } from './support.js'

// The renderer that stands in for `kustomize build` (test/deploy/kustomize.ts says what it does
// and does not support), first on small fixtures, then on deploy/k8s itself.

function fixture(t: Test, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'wire-kustomize-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return dir
}

const KUSTOMIZATION = 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n'
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: app }
spec:
  replicas: 1
  selector: { matchLabels: { app: a } }
  template:
    metadata: { labels: { app: a } }
    spec:
      containers:
        - name: main
          image: wire:1.0
          env: [{ name: A, value: "1" }, { name: B, value: "2" }]
          ports: [{ name: http, containerPort: 4000 }]
        - name: side
          image: other:2
`

t.test('strategic merge: maps merge, null deletes, containers and env merge by name, other lists are replaced', async (t) => {
  const base = { spec: { a: 1, b: 2, list: [1, 2], containers: [{ name: 'x', image: 'i', env: [{ name: 'A', value: '1' }] }, { name: 'y' }] } }
  const patch = { spec: { b: null, c: 3, list: [9], containers: [{ name: 'x', env: [{ name: 'A', value: '2' }, { name: 'C', value: '3' }] }, { name: 'z' }] } }
  t.same(merge(base, patch, [], true), {
    spec: {
      a: 1,
      c: 3,
      list: [9],
      containers: [{ name: 'x', image: 'i', env: [{ name: 'A', value: '2' }, { name: 'C', value: '3' }] }, { name: 'y' }, { name: 'z' }],
    },
  })
  t.same(merge({ rules: [{ a: 1 }, { b: 2 }] }, { rules: [{ c: 3 }] }, [], false), { rules: [{ c: 3 }] }, 'custom resources: lists are replaced')
  t.throws(() => merge({}, { $patch: 'delete' }, [], true), Unsupported, 'directives are refused, not ignored')
})

t.test('a fixture overlay: namespace, images, replicas and patches', async (t) => {
  const dir = fixture(t, {
    'base/kustomization.yaml': `${KUSTOMIZATION}resources: [deploy.yaml]\n`,
    'base/deploy.yaml': DEPLOYMENT,
    'over/kustomization.yaml': `${KUSTOMIZATION}namespace: prod
resources: [../base]
images: [{ name: wire, newName: reg.example/wire, newTag: "2.0" }]
replicas: [{ name: app, count: 5 }]
patches: [{ path: patch.yaml }]
`,
    'over/patch.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: { name: app }
spec:
  template:
    spec:
      containers:
        - name: main
          env: [{ name: B, value: "3" }]
`,
  })
  const [d] = render(join(dir, 'over')) as [Resource]
  t.equal(d.metadata.namespace, 'prod')
  t.equal(d.spec.replicas, 5)
  const [main, side] = d.spec.template.spec.containers
  t.equal(main.image, 'reg.example/wire:2.0', 'the image named wire is replaced')
  t.equal(side.image, 'other:2', 'other images are left alone')
  t.same(main.env, [{ name: 'A', value: '1' }, { name: 'B', value: '3' }], 'env merged by name')
  t.same(main.ports, [{ name: 'http', containerPort: 4000 }], 'untouched fields stay')
})

t.test('what kustomize would refuse or render differently throws', async (t) => {
  const dir = fixture(t, {
    'gen/kustomization.yaml': `${KUSTOMIZATION}configMapGenerator: [{ name: x, literals: [A=1] }]\n`,
    'prefix/kustomization.yaml': `${KUSTOMIZATION}namePrefix: x-\nresources: [d.yaml]\n`,
    'prefix/d.yaml': DEPLOYMENT,
    'miss/kustomization.yaml': `${KUSTOMIZATION}resources: [d.yaml]\npatches: [{ path: p.yaml }]\n`,
    'miss/d.yaml': DEPLOYMENT,
    'miss/p.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: nope }\nspec: { replicas: 2 }\n',
    'outside/kustomization.yaml': `${KUSTOMIZATION}resources: [../prefix/d.yaml]\n`,
    'dup/kustomization.yaml': `${KUSTOMIZATION}resources: [d.yaml, e.yaml]\n`,
    'dup/d.yaml': DEPLOYMENT,
    'dup/e.yaml': DEPLOYMENT,
    'json6902/kustomization.yaml': `${KUSTOMIZATION}resources: [d.yaml]\npatches: [{ path: p.yaml, target: { kind: Deployment, name: app } }]\n`,
    'json6902/d.yaml': DEPLOYMENT,
    'json6902/p.yaml': '- op: replace\n  path: /spec/replicas\n  value: 3\n',
  })
  t.throws(() => render(join(dir, 'gen')), Unsupported, 'generators')
  t.throws(() => render(join(dir, 'prefix')), Unsupported, 'name prefixes')
  t.throws(() => render(join(dir, 'miss')), /matches no resource/, 'a patch that matches nothing')
  t.throws(() => render(join(dir, 'outside')), /not in or below/, 'a file outside the kustomization root')
  t.throws(() => render(join(dir, 'dup')), /already registered/, 'two resources with one id')
  t.throws(() => render(join(dir, 'json6902')), Unsupported, 'JSON 6902 patches')
})

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
  t.notOk(rs.some((r) => r.kind === 'Secret'), 'no Secret: credentials never come from git')
})

t.test('deploy/k8s: the example overlay renders with its changes applied', async (t) => {
  const rs = render(OVERLAY_DIR)
  t.equal(rs.length, render(BASE_DIR).length, 'the overlay adds nothing but changes')
  t.ok(rs.every((r) => r.metadata.namespace === 'wire'), 'everything in the wire namespace')
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

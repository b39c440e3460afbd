import t from 'tap'
import { render } from './render.js'
import { BASE_DIR, find, OVERLAY_DIR } from './support.js'

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

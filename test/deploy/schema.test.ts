import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import t, { type Test } from 'tap'
import { render } from './render.js'
import {
  BASE_DIR,
  EXAMPLES_DIR,
  find,
  isKustomization,
  K8S_DIR,
  LARGE_DIR,
  loadYaml,
  manifestFiles,
  OVERLAY_DIR,
  type Resource,
} from './support.js'
import { schemaErrors, unknownFieldErrors } from './validate.js'

// Every manifest in deploy/k8s parses and validates against the Kubernetes, Gateway API and
// Prometheus Operator schemas (kubernetes-models), with unknown fields refused as `kubectl apply`
// refuses them. Patches are validated as applied, inside the rendered overlays.

const rel = (p: string) => relative(K8S_DIR, p)

/** The overlay plus examples/hpa-waiting-pollers.yaml as a patch, as its header comment says to use it. */
function renderWithPollersPatch(t: Test): Resource[] {
  const dir = mkdtempSync(join(tmpdir(), 'wire-overlay-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync(join(EXAMPLES_DIR, 'hpa-waiting-pollers.yaml'), join(dir, 'hpa-waiting-pollers.yaml'))
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [${relative(dir, OVERLAY_DIR)}]\npatches: [{ path: hpa-waiting-pollers.yaml }]\n`,
  )
  return render(dir)
}

const examples = () =>
  manifestFiles(EXAMPLES_DIR)
    .filter((f) => !f.endsWith('hpa-waiting-pollers.yaml')) // a patch, checked as applied
    .flatMap((f) => loadYaml(f).map((obj) => ({ label: rel(f), obj: obj as Resource })))

t.test('every YAML file in deploy/k8s parses and is either rendered, a patch, or an example', async (t) => {
  const files = manifestFiles()
  t.ok(files.length >= 15, `${files.length} files`)
  const used = new Set<string>()
  for (const f of files) {
    const docs = loadYaml(f) // throws on a syntax error or a duplicate key
    t.ok(docs.length > 0, `${rel(f)} holds at least one document`)
    if (!docs.some(isKustomization)) continue
    used.add(f)
    const k = docs[0] as { resources?: string[]; patches?: Array<{ path?: string }> }
    for (const r of k.resources ?? []) used.add(resolve(f, '..', r))
    for (const p of k.patches ?? []) if (p.path) used.add(resolve(f, '..', p.path))
  }
  const stray = files.filter((f) => !used.has(f) && !f.startsWith(`${EXAMPLES_DIR}/`))
  t.same(stray.map(rel), [], 'no manifest outside a kustomization or examples/ (nothing unvalidated)')
})

t.test('the rendered base, the example overlay and the examples validate against their schemas', async (t) => {
  const sets: Array<[string, Array<{ label: string; obj: Resource }>]> = [
    ['base', render(BASE_DIR).map((obj) => ({ label: `base ${obj.kind}/${obj.metadata.name}`, obj }))],
    ['overlay', render(OVERLAY_DIR).map((obj) => ({ label: `overlay ${obj.kind}/${obj.metadata.name}`, obj }))],
    ['large-board overlay', render(LARGE_DIR).map((obj) => ({ label: `large ${obj.kind}/${obj.metadata.name}`, obj }))],
    ['overlay + hpa-waiting-pollers', renderWithPollersPatch(t).map((obj) => ({ label: `pollers ${obj.kind}/${obj.metadata.name}`, obj }))],
    ['examples', examples()],
  ]
  const all = sets.flatMap(([, objs]) => objs)
  for (const [name, objs] of sets) {
    const errors = objs.flatMap(({ label, obj }) => schemaErrors(obj).map((e) => `${label}: ${e}`))
    t.same(errors, [], `${name}: ${objs.length} objects valid`)
  }
  t.same(unknownFieldErrors(all), [], `${all.length} objects: no field the API does not have`)
  const kinds = new Set(all.map(({ obj }) => `${obj.apiVersion} ${obj.kind}`))
  for (const k of [
    'apps/v1 Deployment',
    'v1 Service',
    'v1 ConfigMap',
    'v1 Secret',
    'gateway.networking.k8s.io/v1 HTTPRoute',
    'autoscaling/v2 HorizontalPodAutoscaler',
    'policy/v1 PodDisruptionBudget',
    'monitoring.coreos.com/v1 PodMonitor',
    'monitoring.coreos.com/v1 PrometheusRule',
  ])
    t.ok(kinds.has(k), `validated a ${k}`)
})

t.test('the custom-metric HPA example adds wire_waiting_pollers next to CPU', async (t) => {
  const hpa = find(renderWithPollersPatch(t), 'HorizontalPodAutoscaler', 'wire-reader').spec
  t.match(hpa, { scaleTargetRef: { name: 'wire-reader' }, maxReplicas: 20 }, 'the overlay still applies')
  t.match(hpa.metrics, [
    { type: 'Resource', resource: { name: 'cpu' } },
    { type: 'Pods', pods: { metric: { name: 'wire_waiting_pollers' } } },
  ])
})

t.test('the checks catch what they are for (negative controls)', async (t) => {
  const base = render(BASE_DIR)
  const writer = structuredClone(find(base, 'Deployment', 'wire-writer'))
  const c = writer.spec.template.spec.containers[0]
  c.livenesProbe = c.livenessProbe // a typo kubectl would refuse
  t.match(
    unknownFieldErrors([
      { label: 'ok', obj: find(base, 'Service', 'wire-writer') },
      { label: 'typo', obj: writer },
    ]).join('\n'),
    /^typo: .*livenesProbe/m,
    'an unknown field is reported, on its object',
  )
  const badPort = structuredClone(find(base, 'Deployment', 'wire-writer'))
  badPort.spec.template.spec.containers[0].ports[0].containerPort = '4000'
  t.match(schemaErrors(badPort).join('\n'), /containerPort must be integer/, 'a wrong type is reported')
  const route = structuredClone(find(base, 'HTTPRoute', 'wire'))
  route.spec.rules[0].matches[0].method = 'FETCH'
  t.match(schemaErrors(route).join('\n'), /method must be equal to one of the allowed values/, 'a method the Gateway API does not know')
  const hpa = structuredClone(find(base, 'HorizontalPodAutoscaler', 'wire-reader'))
  delete hpa.spec.maxReplicas
  t.match(schemaErrors(hpa).join('\n'), /maxReplicas/, 'a missing required field')
  t.match(
    schemaErrors({ apiVersion: 'v1', kind: 'Nope', metadata: { name: 'x' } }).join(''),
    /no schema/,
    'an unknown kind is not waved through',
  )
})

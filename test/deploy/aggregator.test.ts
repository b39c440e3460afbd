import { join } from 'node:path'
import t from 'tap'
import { startAggregator } from '../../apps/aggregator/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, uniqueSchema } from '../helpers/services.js'
import { render } from './render.js'
import { containerEnv, roleOf } from './roles.js'
import { byKind, containersOf, find, K8S_DIR, selects, settingNames } from './support.js'
import { schemaErrors, unknownFieldErrors } from './validate.js'

// deploy/k8s/aggregator: its Deployment, Service, HPA and PDB validate, line up with each other and
// with the code, and the aggregator started with the environment they give answers its probes.

const DIR = join(K8S_DIR, 'aggregator')
const rs = render(DIR)
const DEPLOYMENT = 'wire-aggregator'

t.test('every object validates against its schema, with no unknown field', async (t) => {
  t.same(rs.flatMap((o) => schemaErrors(o).map((e) => `${o.kind}/${o.metadata.name}: ${e}`)), [], `${rs.length} objects valid`)
  t.same(unknownFieldErrors(rs.map((obj) => ({ label: `${obj.kind}/${obj.metadata.name}`, obj }))), [])
  t.same(rs.map((o) => o.kind).sort(), ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service'])
})

t.test('selectors, ports, settings, probes and security line up', async (t) => {
  const d = find(rs, 'Deployment', DEPLOYMENT)
  const [c] = containersOf(d)
  t.equal(roleOf(c), 'aggregator', 'runs dist/apps/aggregator/main.js')
  const pods = d.spec.template.metadata.labels
  t.ok(selects(d.spec.selector.matchLabels, pods), 'the selector matches its pods')
  t.ok(selects(find(rs, 'Service', DEPLOYMENT).spec.selector, pods), 'the Service selects them')
  t.ok(selects(find(rs, 'PodDisruptionBudget', DEPLOYMENT).spec.selector.matchLabels, pods), 'the PDB covers them')
  const hpa = find(rs, 'HorizontalPodAutoscaler', DEPLOYMENT).spec
  t.match(hpa.scaleTargetRef, { kind: 'Deployment', name: DEPLOYMENT })
  t.equal(d.spec.replicas, undefined, 'no replicas field for a re-apply to reset')
  t.ok(hpa.minReplicas >= 2, 'two at least')
  const env = containerEnv(rs, DEPLOYMENT)
  const known = new Set(settingNames())
  t.same(Object.keys(env).filter((k) => !known.has(k)), [], 'every variable is a real setting')
  const cfg = loadConfig(env)
  t.equal(c.ports[0].containerPort, cfg.port, 'containerPort = SERVER_PORT')
  t.equal(d.spec.template.metadata.annotations['prometheus.io/port'], String(cfg.port))
  t.same(cfg.aggregator.allowHosts, { hosts: [], cidrs: ['10.0.0.0/8'] }, 'the cluster network opened deliberately')
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) t.equal(c[probe].httpGet.port, 'http', `${probe} on the named port`)
  t.ok(d.spec.template.spec.terminationGracePeriodSeconds > 5 + 30, 'Kubernetes waits longer than Wire does')
  t.match(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
  t.equal(d.spec.template.spec.automountServiceAccountToken, false)
})

t.test('the aggregator started with that environment answers its probes and metrics', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema('deployagg')
  t.teardown(() => dropSchema(schema))
  const cfg = loadConfig({ ...containerEnv(rs, DEPLOYMENT), AGGREGATOR_PG_SCHEMA: schema, LOG_LEVEL: 'silent' })
  const started = await startAggregator(cfg, createLogger('aggregator', 'silent'), { follow: false })
  t.teardown(() => started.close())
  for (const path of ['/healthz', '/readyz']) t.equal((await started.app.inject({ url: path })).statusCode, 200, path)
  const metrics = await started.app.inject({ url: '/metrics' })
  t.match(metrics.body, /process_cpu_seconds_total/, '/metrics')
  const tables = await started.ctx.db.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = $1 order by 1`, [schema])
  t.same(tables.rows.map((r) => r.table_name), ['blocked_authorities', 'indexed_signals', 'registered_boards', 'schema_migrations'], 'its own tables, in its own schema, from migrations/aggregator')
})

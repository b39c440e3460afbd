import { join } from 'node:path'
import t from 'tap'
import { startAggregator } from '../../apps/aggregator/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, uniqueSchema } from '../helpers/services.js'
import { render } from './render.js'
import { containerEnv, standaloneRoleLinesUp } from './roles.js'
import { K8S_DIR } from './support.js'

// deploy/k8s/aggregator: its Deployment, Service, HPA and PDB validate, line up with each other and
// with the code, and the aggregator started with the environment they give answers its probes.

const DIR = join(K8S_DIR, 'aggregator')
const rs = render(DIR)
const DEPLOYMENT = 'wire-aggregator'

const linesUp = standaloneRoleLinesUp(t, rs, DEPLOYMENT, 'aggregator')

t.test('selectors, ports, settings, probes and security line up', async (t) => {
  const { cfg } = linesUp(t)
  t.same(cfg.aggregator.allowHosts, { hosts: [], cidrs: ['10.0.0.0/8'] }, 'the cluster network opened deliberately')
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
  const tables = await started.ctx.db.query<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = $1 order by 1`,
    [schema],
  )
  t.same(
    tables.rows.map((r) => r.table_name),
    ['blocked_authorities', 'indexed_signals', 'registered_boards', 'schema_migrations'],
    'its own tables, in its own schema, from migrations/aggregator',
  )
})

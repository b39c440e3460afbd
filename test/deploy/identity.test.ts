import { join } from 'node:path'
import t from 'tap'
import { startIdentity } from '../../apps/identity/app.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, uniqueSchema } from '../helpers/services.js'
import { render } from './render.js'
import { containerEnv, standaloneRoleLinesUp } from './roles.js'
import { K8S_DIR } from './support.js'

// deploy/k8s/identity: its Deployment, Service, HPA and PDB validate, line up with each other and
// with the code, and the identity network started with the environment they give answers its probes.

const DIR = join(K8S_DIR, 'identity')
const rs = render(DIR)
const DEPLOYMENT = 'wire-identity'

const linesUp = standaloneRoleLinesUp(t, rs, DEPLOYMENT, 'identity')

t.test('selectors, ports, settings, probes, secrets and security line up', async (t) => {
  const { c } = linesUp(t)
  const secrets = (c.env ?? [])
    .filter((e: { valueFrom?: unknown }) => e.valueFrom)
    .map((e: { name: string }) => e.name)
    .sort()
  t.same(
    secrets,
    ['DATABASE_URL', 'IDENTITY_SECRET', 'SERVER_ADMIN_TOKEN'],
    'the server key comes from a Secret, the same in every replica',
  )
})

t.test('the identity network started with that environment answers its probes and metrics', async (t) => {
  await assertServicesUp()
  const schema = uniqueSchema('deployidn')
  t.teardown(() => dropSchema(schema))
  const cfg = loadConfig({ ...containerEnv(rs, DEPLOYMENT), IDENTITY_PG_SCHEMA: schema, LOG_LEVEL: 'silent' })
  const started = await startIdentity(cfg, createLogger('identity', 'silent'))
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
    ['accounts', 'identities', 'ledger', 'schema_migrations', 'server_key', 'transfers'],
    'its own tables, in its own schema, from migrations/identity',
  )
  const reg = await started.app.inject({ method: 'POST', url: '/identity/register', payload: {} })
  t.equal(reg.statusCode, 201, 'registers')
  t.equal(
    (await started.ctx.db.query(`select 1 from "${schema}".server_key`)).rowCount,
    0,
    'IDENTITY_SECRET set: no key kept in the database',
  )
})

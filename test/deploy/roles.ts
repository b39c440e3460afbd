import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { startAggregator } from '../../apps/aggregator/app.js'
import { startAgents } from '../../apps/agents/app.js'
import { startIdentity } from '../../apps/identity/app.js'
import { startReader } from '../../apps/reader/app.js'
import { startSweeper } from '../../apps/sweeper/app.js'
import { startWriter } from '../../apps/writer/app.js'
import { loadConfig, type Config } from '../../libs/shared/config/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'
import { containersOf, find, selects, settingNames, type Resource } from './support.js'
import { schemaErrors, unknownFieldErrors } from './validate.js'

export type Role = 'writer' | 'reader' | 'agents' | 'sweeper' | 'aggregator' | 'identity'

/** What each Secret key the manifests reference stands for on this machine. */
const SECRET_STAND_INS: Record<string, string> = {
  DATABASE_URL: TEST_DATABASE_URL,
  DATABASE_URL_DIRECT: TEST_DATABASE_URL,
  DATABASE_REPLICA_URL: TEST_DATABASE_URL,
  REDIS_URL: TEST_REDIS_URL,
  SERVER_ADMIN_TOKEN: 'admin-secret-token',
  FINGERPRINT_SECRET: 'fingerprint-test-key',
  IDENTITY_SECRET: 'identity-test-key-0123456789abcdef0123',
}

/**
 * The environment a role's container gets from the rendered manifests: the ConfigMaps it takes
 * with envFrom, then its own env (secretKeyRef values replaced by this machine's services).
 */
export function containerEnv(rs: Resource[], deployment: string): Record<string, string> {
  const [c] = containersOf(find(rs, 'Deployment', deployment))
  const env: Record<string, string> = {}
  for (const from of c.envFrom ?? []) {
    if (!from.configMapRef) throw new Error(`${deployment}: only configMapRef envFrom is modelled`)
    Object.assign(env, find(rs, 'ConfigMap', from.configMapRef.name).data)
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value
    else if (e.valueFrom?.secretKeyRef)
      env[e.name] = SECRET_STAND_INS[e.valueFrom.secretKeyRef.key] ?? `unknown secret key ${e.valueFrom.secretKeyRef.key}`
    else throw new Error(`${deployment}: env ${e.name}: only value and secretKeyRef are modelled`)
  }
  return env
}

/** The role a container runs: node dist/apps/<role>/main.js. */
export function roleOf(container: { command?: string[]; args?: string[] }): Role {
  const argv = [...(container.command ?? []), ...(container.args ?? [])]
  const m =
    argv.length === 2 && argv[0] === 'node'
      ? /^dist\/apps\/(writer|reader|agents|sweeper|aggregator|identity)\/main\.js$/.exec(argv[1]!)
      : null
  if (!m) throw new Error(`not a Wire role command: ${argv.join(' ')}`)
  return m[1] as Role
}

/**
 * A role's fastify app, composed as apps/<role>/main.ts composes it (without listen), on this
 * machine's PostgreSQL (a fresh schema) and Redis, with the settings the manifests give it.
 */
export async function startRoleApp(
  t: Test,
  role: Role,
  env: Record<string, string>,
  schema: string,
): Promise<{ app: FastifyInstance; cfg: Config }> {
  const cfg = loadConfig({ ...env, WIRE_PG_SCHEMA: schema, WIRE_CONFIG: '/nonexistent/subwire.config.json', LOG_LEVEL: 'silent' })
  const log = createLogger(role, cfg.logLevel)
  const started = await START[role](cfg, log)
  t.teardown(async () => {
    await started.close()
    if ('sweeper' in started) await dropSchema(started.sweeper.bossSchema)
  })
  return { app: started.app, cfg }
}

const START = {
  writer: startWriter,
  reader: startReader,
  agents: startAgents,
  sweeper: startSweeper,
  aggregator: startAggregator,
  identity: startIdentity,
}

/** A schema for one test file, migrated by the writer (started first), dropped at the end. */
export async function deploySchema(t: Test): Promise<string> {
  await assertServicesUp()
  const schema = uniqueSchema('deploy')
  t.teardown(() => dropSchema(schema))
  return schema
}

/**
 * A role deployed on its own (the aggregator, the identity network): its objects validate with no
 * unknown field and are the five it needs, and its Deployment, Service, PDB and HPA line up, with
 * only real settings in its environment. Returns what the role's own checks go on with.
 */
export function standaloneRoleLinesUp(t: Test, rs: Resource[], deployment: string, role: Role) {
  t.test('every object validates against its schema, with no unknown field', async (t) => {
    t.same(
      rs.flatMap((o) => schemaErrors(o).map((e) => `${o.kind}/${o.metadata.name}: ${e}`)),
      [],
      `${rs.length} objects valid`,
    )
    t.same(unknownFieldErrors(rs.map((obj) => ({ label: `${obj.kind}/${obj.metadata.name}`, obj }))), [])
    t.same(rs.map((o) => o.kind).sort(), ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service'])
  })
  return (t: Test) => {
    const d = find(rs, 'Deployment', deployment)
    const [c] = containersOf(d)
    t.equal(roleOf(c), role, `runs dist/apps/${role}/main.js`)
    const pods = d.spec.template.metadata.labels
    t.ok(selects(d.spec.selector.matchLabels, pods), 'the selector matches its pods')
    t.ok(selects(find(rs, 'Service', deployment).spec.selector, pods), 'the Service selects them')
    t.ok(selects(find(rs, 'PodDisruptionBudget', deployment).spec.selector.matchLabels, pods), 'the PDB covers them')
    const hpa = find(rs, 'HorizontalPodAutoscaler', deployment).spec
    t.match(hpa.scaleTargetRef, { kind: 'Deployment', name: deployment })
    t.equal(d.spec.replicas, undefined, 'no replicas field for a re-apply to reset')
    t.ok(hpa.minReplicas >= 2, 'two at least')
    const env = containerEnv(rs, deployment)
    const known = new Set(settingNames())
    t.same(
      Object.keys(env).filter((k) => !known.has(k)),
      [],
      'every variable is a real setting',
    )
    const cfg = loadConfig(env)
    t.equal(c.ports[0].containerPort, cfg.port, 'containerPort = SERVER_PORT')
    t.equal(d.spec.template.metadata.annotations['prometheus.io/port'], String(cfg.port))
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'])
      t.equal(c[probe].httpGet.port, 'http', `${probe} on the named port`)
    t.ok(d.spec.template.spec.terminationGracePeriodSeconds > 5 + 30, 'Kubernetes waits longer than Wire does')
    t.match(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
    t.equal(d.spec.template.spec.automountServiceAccountToken, false)
    return { d, c, env, cfg }
  }
}

import t from 'tap'
import { purgeExpired } from '../../apps/sweeper/jobs/purge-expired.js'
import { refreshStats } from '../../apps/sweeper/jobs/refresh-stats.js'
// the aggregator's metrics (registered where its app is loaded), for the check of the alert rules' names below
import '../../apps/aggregator/metrics.js'
import { networkIdentity } from '../../libs/shared/auth/index.js'
import { redisBus } from '../../libs/shared/bus/index.js'
import { ident, signalPurger, statsWriter } from '../../libs/shared/db/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { registry, reportReplicaHealth } from '../../libs/shared/metrics/index.js'
import { startFakeIdentity } from '../helpers/fake-identity.js'
import { startRedis } from '../helpers/fleet.js'
import { startStack } from '../helpers/stack.js'
import { eventually } from '../helpers/wait.js'
import { insertSignals } from '../sweeper/support.js'
import { parse } from 'yaml'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { PER_HANDLE_METRICS } from '../../libs/shared/metrics/process.js'
import { loadYaml, EXAMPLES_DIR, LARGE_DIR, parseMetrics, sample } from './support.js'

// The metrics docs/deploy.md lists, read back from /metrics (prom-client's registry, which every role
// serves there): tail hits, Redis and identity-network health, sweeper outcomes and purged rows.
// The registry is per process, so each check compares before and after.

const quiet = createLogger('server', 'silent')
const scrape = () => registry.metrics()
const value = async (name: string, labels: Record<string, string> = {}) => sample(await scrape(), name, labels) ?? 0

// first in the file: nothing has created a Redis bus or a network identity client yet
t.test('a board without Redis and in local identity mode shows neither health gauge', async (t) => {
  const s = await startStack(t, { noRedis: true })
  const body = (await s.app.inject({ url: '/metrics' })).body
  t.ok(sample(body, 'wire_waiting_pollers') !== undefined, '/metrics answers with Wire metrics')
  t.equal(sample(body, 'wire_redis_up'), undefined, 'no wire_redis_up (an alert on 0 must not fire)')
  t.equal(sample(body, 'wire_identity_network_up'), undefined, 'no wire_identity_network_up')
})

t.test('wire_open_connections counts the open client connections; nothing walks every handle per scrape', async (t) => {
  const s = await startStack(t)
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = s.app.server.address() as { port: number }
  const open0 = await value('wire_open_connections')
  const sockets: Socket[] = []
  for (let i = 0; i < 5; i++) {
    const c = connect(port, '127.0.0.1')
    await once(c, 'connect')
    sockets.push(c)
  }
  t.ok(await eventually(async () => (await value('wire_open_connections')) === open0 + 5), 'five more while they are open')
  for (const c of sockets) c.destroy()
  t.ok(await eventually(async () => (await value('wire_open_connections')) === open0), 'back once they closed')
  const body = await scrape()
  for (const name of PER_HANDLE_METRICS)
    t.notOk(body.includes(`\n${name} `) || body.includes(`\n${name}{`), `no ${name}: it walks every handle on each scrape`)
  t.ok(sample(body, 'process_max_fds') !== undefined, 'process_max_fds stays, to compare with')
})

t.test('wire_tail_reads_total counts reads answered from the tail and from the database', async (t) => {
  // the chunk cache off: a read older than the tail would ask for its chunk, and whether a later read finds it is a race
  const s = await startStack(t, { overrides: { tailSize: 3 }, env: { READER_CHUNK_CACHE_MAX_BYTES: '0' } })
  const { nextCursor: c0 } = await s.read() // seqs are dense: the six publishes take c0+1 … c0+6
  for (let n = 1; n <= 6; n++) t.equal((await s.publish({ $type: 'note', n })).statusCode, 200)
  t.ok(await eventually(async () => (await s.read(`cursor=${c0 + 4}`)).signals.length === 2), 'all six in the feed')
  const tail0 = await value('wire_tail_reads_total', { from: 'tail' })
  const db0 = await value('wire_tail_reads_total', { from: 'db' })
  t.equal((await s.read(`cursor=${c0 + 4}`)).signals.length, 2, 'a cursor inside the tail (the last 3 signals)')
  t.equal(await value('wire_tail_reads_total', { from: 'tail' }), tail0 + 1, 'counted as a tail read')
  t.equal((await s.read(`cursor=${c0}`)).signals.length, 6, 'a cursor older than the tail')
  t.equal(await value('wire_tail_reads_total', { from: 'db' }), db0 + 1, 'counted as a database read')
  t.equal((await s.read('limit=2')).signals.length, 2, 'the newest page, which the tail holds')
  t.equal(await value('wire_tail_reads_total', { from: 'tail' }), tail0 + 2, 'from the tail')
  t.equal((await s.read('limit=5')).signals.length, 5, 'a newest page larger than the tail')
  t.equal(await value('wire_tail_reads_total', { from: 'db' }), db0 + 2, 'from the database')
})

t.test('wire_redis_up follows the Redis connection of the wake-up bus', async (t) => {
  const redis = await startRedis(t)
  const bus = redisBus(redis.url, 'metrics_test', quiet)
  t.teardown(() => bus.close())
  t.ok(await eventually(() => bus.healthy()), 'connected')
  t.equal(await value('wire_redis_up'), 1, 'up')
  await redis.stop()
  t.ok(await eventually(() => !bus.healthy()), 'Redis stopped')
  t.equal(sample(await scrape(), 'wire_redis_up'), 0, 'down')
  await redis.start()
  t.ok(await eventually(() => bus.healthy(), 10_000), 'reconnected')
  t.equal(await value('wire_redis_up'), 1, 'up again')
})

t.test('wire_identity_network_up and wire_identity_verifies_total follow verify calls', async (t) => {
  const fake = await startFakeIdentity(t, { 'tok-good-1': { identityId: 'id_a' }, 'tok-good-2': { identityId: 'id_b' } })
  const id = networkIdentity({ url: fake.url, authority: 'board.test', log: quiet, timeoutMs: 1000 })
  const count = (result: string) => value('wire_identity_verifies_total', { result })
  const before = { accepted: await count('accepted'), rejected: await count('rejected'), unavailable: await count('unavailable') }

  await id.authenticate('Bearer tok-good-1')
  t.equal(await value('wire_identity_network_up'), 1, 'an accepted token: up')
  t.equal(await count('accepted'), before.accepted + 1)
  await t.rejects(id.authenticate('Bearer tok-unknown'), { code: 'unauthorized' })
  t.equal(await value('wire_identity_network_up'), 1, 'a rejected token: still up (the network answered)')
  t.equal(await count('rejected'), before.rejected + 1)
  await fake.stop()
  await t.rejects(id.authenticate('Bearer tok-good-2'), { code: 'unavailable' })
  t.equal(sample(await scrape(), 'wire_identity_network_up'), 0, 'no answer: down')
  t.equal(await count('unavailable'), before.unavailable + 1)
  await fake.start()
  await id.authenticate('Bearer tok-good-2')
  t.equal(await value('wire_identity_network_up'), 1, 'back up')
})

t.test('sweeper runs are counted by outcome, with the rows they purged and rolled up', async (t) => {
  const HOUR = 3600
  const s = await startStack(t, { env: { SIGNAL_SWEEP_GRACE_SECONDS: String(HOUR) } })
  const db = s.infra.primary
  await insertSignals(db, s.schema, { type: 'gone', count: 30, createdSecondsAgo: 2 * 86_400, ttl: 60 })
  await insertSignals(db, s.schema, { type: 'gone', count: 4, createdSecondsAgo: 2 * 86_400, ttl: 3 * 86_400, removedSecondsAgo: 2 * HOUR })
  const runs = (sweep: string, outcome: string) => value('wire_sweep_runs_total', { sweep, outcome })
  const opts = { budgetMs: 60_000, pauseMs: 0 }
  const before = {
    expired: await value('wire_purged_signals_total', { kind: 'expired' }),
    removed: await value('wire_purged_signals_total', { kind: 'removed' }),
    rolled: await value('wire_stats_rolled_up_signals_total'),
    purgeOk: await runs('purge-expired', 'complete'),
    statsOk: await runs('refresh-stats', 'complete'),
    purgeFailed: await runs('purge-expired', 'failed'),
    statsFailed: await runs('refresh-stats', 'failed'),
    partial: await runs('purge-expired', 'partial'),
  }
  const t0 = Date.now() / 1000

  await refreshStats(statsWriter(db, s.infra.schema), quiet, { batchSize: 1000, ...opts })
  t.equal(await value('wire_stats_rolled_up_signals_total'), before.rolled + 34, 'rolled up')
  t.equal(await runs('refresh-stats', 'complete'), before.statsOk + 1)
  const report = await purgeExpired(signalPurger(db, s.infra.schema), quiet, { graceSeconds: HOUR, batchSize: 10, ...opts })
  t.match(report, { expired: 30, removed: 4, done: true })
  t.equal(await value('wire_purged_signals_total', { kind: 'expired' }), before.expired + 30, 'expired rows purged')
  t.equal(await value('wire_purged_signals_total', { kind: 'removed' }), before.removed + 4, 'removed rows purged')
  t.equal(await runs('purge-expired', 'complete'), before.purgeOk + 1, 'a complete run')
  t.ok((await value('wire_sweep_last_success_timestamp_seconds', { sweep: 'purge-expired' })) >= Math.floor(t0), 'its time recorded')
  const hist = parseMetrics(await scrape()).find(
    (m) => m.name === 'wire_sweep_duration_seconds_count' && m.labels.sweep === 'purge-expired',
  )
  t.ok(hist && hist.value >= 1, 'and its duration')

  await purgeExpired(signalPurger(db, s.infra.schema), quiet, { graceSeconds: HOUR, batchSize: 10, budgetMs: 0, pauseMs: 0 })
  t.equal(await runs('purge-expired', 'partial'), before.partial + 1, 'a run its budget cut short is partial')

  const missing = ident('no_such_schema_for_metrics')
  await t.rejects(purgeExpired(signalPurger(db, missing), quiet, { graceSeconds: HOUR, batchSize: 10, ...opts }))
  t.equal(await runs('purge-expired', 'failed'), before.purgeFailed + 1, 'a failed purge')
  await t.rejects(refreshStats(statsWriter(db, missing), quiet, { batchSize: 10, ...opts }))
  t.equal(await runs('refresh-stats', 'failed'), before.statsFailed + 1, 'a failed rollup')
})

t.test('every metric the alert rules and the HPA example use exists', async (t) => {
  // the tests above made the optional gauges show, as a process using Redis and the identity network does;
  // a reader with DATABASE_REPLICA_URL reports its replica
  t.teardown(reportReplicaHealth(() => true))
  const text = await scrape()
  const names = new Set(parseMetrics(text).map((m) => m.name))
  for (const line of text.split('\n')) {
    const m = /^# TYPE (\S+) /.exec(line)
    if (m) names.add(m[1]!)
  }
  const rule = loadYaml(`${EXAMPLES_DIR}/prometheusrule.yaml`)[0] as any
  const exprs: string[] = rule.spec.groups.flatMap((g: any) => g.rules.map((r: any) => r.expr))
  const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:wire|nodejs|process)_[a-z0-9_]+)/g)].map((m) => m[1]!)))
  used.add((loadYaml(`${EXAMPLES_DIR}/hpa-waiting-pollers.yaml`)[0] as any).spec.metrics[1].pods.metric.name)
  used.add((loadYaml(`${LARGE_DIR}/hpa.yaml`)[0] as any).spec.metrics[1].pods.metric.name)
  const adapter = parse((loadYaml(`${EXAMPLES_DIR}/prometheus-adapter.yaml`)[0] as any).data['config.yaml'])
  for (const rule of adapter.rules) used.add(/^(\w+)\{/.exec(rule.seriesQuery)![1]!)
  t.ok(used.size >= 10, `${used.size} metric names used`)
  for (const name of used) t.ok(names.has(name), `${name} is served on /metrics`)
})

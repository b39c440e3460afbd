import client from 'prom-client'
import { HotHistogram } from './hot-histogram.js'
import { processMetrics } from './process.js'

/**
 * Process-wide Prometheus metrics (prom-client's default registry), served on /metrics by every
 * role. Names are prefixed `wire_`; labels stay low-cardinality (codes, kinds — never ids).
 */
export const registry = client.register
export { reportConnections } from './process.js'
processMetrics(registry)

/**
 * Counts bumped on every poll, long-poll and publish: plain numbers, read into their metrics when
 * scraped (prom-client's inc looks its labels up on every call, which a fan-out pays per response).
 */
export const hotCounts = { waiting: 0, tailReads: 0, dbReads: 0, fastPathServed: 0, fastPathHandedOver: 0, published: 0 }

/** A counter or gauge of a name, a help line and the labels it takes (none when not given). */
const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  new client.Counter<L>({ name, help, labelNames })
const gauge = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  new client.Gauge<L>({ name, help, labelNames })

export const metrics = {
  publishes: new client.Counter({
    name: 'wire_publishes_total',
    help: 'Publish requests by result code',
    labelNames: ['code'],
    // the fast path's 200s are counted in hotCounts.published (every publish); the rest here, as they happen
    collect() {
      if (hotCounts.published) this.inc({ code: '200' }, hotCounts.published)
      hotCounts.published = 0
    },
  }),
  publishSeconds: new HotHistogram(
    'wire_publish_duration_seconds',
    'Publish latency, request to acknowledgement',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registry,
  ),
  batchSize: new client.Histogram({
    name: 'wire_batch_size',
    help: 'Signals per committed batch',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
  }),
  busMessages: counter(
    'wire_bus_messages_total',
    'Wake-up bus messages received from other processes, by path (redis, pg) and outcome (delivered, duplicate: another path was first, invalid: dropped)',
    ['path', 'outcome'],
  ),
  wakes: counter('wire_feed_wakes_total', 'Wake-ups received by readers (bus, resync, timer)', ['source']),
  feedQueries: new client.Counter({ name: 'wire_feed_queries_total', help: 'Feed queries to the read database', labelNames: ['kind'] }),
  waiting: new client.Gauge({
    name: 'wire_waiting_pollers',
    help: 'Long-polls waiting now',
    collect() {
      this.set(hotCounts.waiting)
    },
  }),
  idleGcs: counter('wire_idle_gc_total', 'Memory-reducing GCs made when the process went quiet after its RSS grew (IDLE_GC_INTERVAL_MS)'),
  idleGcCpuSeconds: new client.Counter({ name: 'wire_idle_gc_cpu_seconds_total', help: 'Process CPU the idle memory-reducing GCs took' }),
  a2aTaskBytes: gauge('wire_a2a_task_bytes', 'JSON characters of the A2A tasks this process keeps (working and finished)'),
  waitingMax: gauge('wire_waiting_pollers_max', 'READER_MAX_WAITERS: long-polls this process may hold at once (0: no cap)'),
  waitersRefused: counter('wire_waiters_refused_total', 'Long-polls refused with 503 because the process held READER_MAX_WAITERS'),
  tailHits: new client.Counter({
    name: 'wire_tail_reads_total',
    help: 'Feed reads by where they were answered',
    labelNames: ['from'],
    collect() {
      this.reset()
      this.inc({ from: 'tail' }, hotCounts.tailReads)
      this.inc({ from: 'db' }, hotCounts.dbReads)
    },
  }),
  tailSize: new client.Gauge({ name: 'wire_tail_signals', help: 'Signals held in the reader tail' }),
  wakeToResponse: new client.Histogram({
    name: 'wire_wake_to_response_seconds',
    help: 'From the tail advancing to the last long-poll of a group of identical waiters being answered',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  }),
  fanOutSeconds: new client.Histogram({
    name: 'wire_wake_fanout_seconds',
    help: 'Time to settle and answer every waiting long-poll after one tail advance',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  }),
  fastPathRequests: new client.Counter({
    name: 'wire_fast_path_requests_total',
    help: 'GET /sw/signals (reader) and POST /sw/signals (writer) requests served by the fast path below fastify, and connections it handed to fastify (another route or an unusual request)',
    labelNames: ['outcome'],
    collect() {
      this.reset()
      this.inc({ outcome: 'served' }, hotCounts.fastPathServed)
      this.inc({ outcome: 'handed_over' }, hotCounts.fastPathHandedOver)
    },
  }),
  dbSynchronousStandby: gauge(
    'wire_db_synchronous_standby',
    '1 when a synchronous standby confirms every commit before a publish is answered (an acknowledged signal survives a failover), else 0',
  ),
  replicaLagSignals: gauge(
    'wire_replica_lag_signals',
    'Known head minus the head the replica had replayed at the last look (signals it has not; the tail takes them from the primary after 500 ms)',
  ),
  identityVerifies: counter(
    'wire_identity_verifies_total',
    'Verify calls to the identity network by result (accepted, rejected, unavailable)',
    ['result'],
  ),
  // the sweeper: `sweep` is purge-expired or refresh-stats (not `job`, which Prometheus sets on every target)
  sweepRuns: counter(
    'wire_sweep_runs_total',
    'Sweeper job runs by outcome: complete, partial (budget or shutdown cut it short; the next slot goes on), skipped (another sweeper held the rollup), failed',
    ['sweep', 'outcome'],
  ),
  sweepSeconds: new client.Histogram({
    name: 'wire_sweep_duration_seconds',
    help: 'Sweeper job run time',
    labelNames: ['sweep'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  }),
  sweepLastSuccess: gauge(
    'wire_sweep_last_success_timestamp_seconds',
    'Unix time at which a job run last finished without an error (complete or partial)',
    ['sweep'],
  ),
  purgedPartitions: counter(
    'wire_purged_partitions_total',
    'Partitions of the signals table dropped by the purge, every row in them past expiry + grace (pinned ones carried forward)',
  ),
  purgedSignals: counter(
    'wire_purged_signals_total',
    'Signals deleted by the purge: expired (past expiry + grace) or removed (by a moderator, past the grace)',
    ['kind'],
  ),
  rolledUpSignals: counter('wire_stats_rolled_up_signals_total', 'Signals counted into stats_buckets by the rollup'),
  refused: counter(
    'wire_refused_total',
    'Requests refused by a per-process guard or a per-client budget (overloaded, reads, long_polls, publishes, new_identities)',
    ['reason'],
  ),
  dbSeconds: new client.Histogram({
    name: 'wire_db_query_duration_seconds',
    help: 'Database statements and transactions, from asking the pool for a connection to the answer, by pool (its application_name) and op (query, transaction)',
    labelNames: ['pool', 'op'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  }),
}
// every reason from the start, at 0: rate() and the alerts see a series before the first refusal
for (const reason of [
  'overloaded',
  'reads',
  'long_polls',
  'publish_attempts',
  'publishes',
  'admin_failures',
  'registrations',
  'new_identities',
  'database_reads',
])
  metrics.refused.inc({ reason }, 0)

// ── Health of optional dependencies ─────────────────────────────────────────────────────────────
// These gauges appear in /metrics only in processes that use the dependency (a board without Redis,
// or in local identity mode, shows neither), so "== 0" alerts never fire for a dependency not in use.

/**
 * A gauge that is 1 while every reporting source is healthy, registered at the first report.
 * The returned function is called by a source: /metrics reads `healthy()` at every scrape, and
 * the function it returns stops reporting.
 */
function healthGauge(name: string, help: string): (healthy: () => boolean) => () => void {
  const sources = new Set<() => boolean>()
  const gauge = new client.Gauge({
    name,
    help,
    registers: [],
    collect() {
      this.set([...sources].every((healthy) => healthy()) ? 1 : 0)
    },
  })
  return (healthy) => {
    if (!registry.getSingleMetric(name)) registry.registerMetric(gauge)
    sources.add(healthy)
    return () => void sources.delete(healthy)
  }
}

/** Called by the Redis bus. */
export const reportRedisHealth = healthGauge(
  'wire_redis_up',
  '1 while the wake-up bus can publish and receive through Redis (the bus reports healthy), 0 while it cannot',
)
/** Called by the LISTEN/NOTIFY path of the bus. */
export const reportListenHealth = healthGauge(
  'wire_pg_listen_up',
  '1 while the wake-up bus listens on the primary (LISTEN/NOTIFY), 0 while its connection is down',
)
/** Called by the replica's failover. */
export const reportReplicaHealth = healthGauge(
  'wire_replica_up',
  '1 while reads go to the replica (DATABASE_REPLICA_URL), 0 while it is unreachable and they go to the primary',
)

const identityUp = new client.Gauge({
  name: 'wire_identity_network_up',
  help: '1 if the last call to the identity network got an answer (accepted or rejected), 0 if it failed (timeout, no connection, 5xx, bad answer)',
  registers: [],
})

/** Called by the network identity client after every verify call. */
export function reportIdentityCall(result: 'accepted' | 'rejected' | 'unavailable') {
  if (!registry.getSingleMetric('wire_identity_network_up')) registry.registerMetric(identityUp)
  identityUp.set(result === 'unavailable' ? 0 : 1)
  metrics.identityVerifies.inc({ result })
}

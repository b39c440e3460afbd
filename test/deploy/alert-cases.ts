// Synthetic series for `promtool test rules` (test/deploy/alerts.test.ts): for each alert of
// deploy/k8s/examples/prometheusrule.yaml, series that make it fire (at `at`, with `labels` besides
// its own severity), and one healthy board on which none fires. Values use promtool's expanding
// notation ('a+bxn': n steps from a, adding b each minute).

export interface Series {
  series: string
  values: string
}
export interface AlertCase {
  alert: string
  series: Series[]
  at: string
  /** Labels of the firing alert taken from its series (severity comes from the rule). */
  labels?: Record<string, string>
}

const pod = 'pod="wire-reader-0", instance="10.0.0.7:4000"'
const podLabels = { pod: 'wire-reader-0', instance: '10.0.0.7:4000' }
/** A histogram whose observations mostly fall between `slow` and the next bucket: p99 above `slow`. */
const slowHistogram = (name: string, fast: number, slow: number): Series[] => [
  { series: `${name}_bucket{le="${fast}"}`, values: '0+1x40' },
  { series: `${name}_bucket{le="${slow}"}`, values: '0+1x40' },
  { series: `${name}_bucket{le="2.5"}`, values: '0+100x40' },
  { series: `${name}_bucket{le="+Inf"}`, values: '0+100x40' },
]

export const FIRING: AlertCase[] = [
  {
    alert: 'WirePublishErrors',
    series: [
      { series: 'wire_publishes_total{code="503"}', values: '0+60x20' },
      { series: 'wire_publishes_total{code="200"}', values: '0+600x20' },
    ],
    at: '15m',
  },
  { alert: 'WirePublishSlow', series: slowHistogram('wire_publish_duration_seconds', 0.25, 0.5), at: '20m' },
  { alert: 'WireIdentityNetworkDown', series: [{ series: 'wire_identity_network_up{pod="wire-writer-0"}', values: '1 0x10' }], at: '6m' },
  {
    alert: 'WireReadersSaturated',
    series: [
      { series: `wire_waiting_pollers{${pod}}`, values: '19000x20' },
      { series: `wire_waiting_pollers_max{${pod}}`, values: '20000x20' },
      { series: 'wire_waiting_pollers{pod="wire-reader-1", instance="10.0.0.8:4000"}', values: '5000x20' },
      { series: 'wire_waiting_pollers_max{pod="wire-reader-1", instance="10.0.0.8:4000"}', values: '20000x20' },
    ],
    at: '10m',
    labels: podLabels,
  },
  {
    alert: 'WireEventLoopLag',
    series: [{ series: `nodejs_eventloop_lag_p99_seconds{${pod}}`, values: '0.5x20' }],
    at: '10m',
    labels: podLabels,
  },
  { alert: 'WireLongPollWakeSlow', series: slowHistogram('wire_wake_to_response_seconds', 0.1, 0.25), at: '20m' },
  { alert: 'WireReplicaLagging', series: [{ series: `wire_replica_lag_signals{${pod}}`, values: '40x20' }], at: '10m', labels: podLabels },
  { alert: 'WireReplicaDown', series: [{ series: `wire_replica_up{${pod}}`, values: '1 0x10' }], at: '6m', labels: podLabels },
  { alert: 'WireRedisDown', series: [{ series: `wire_redis_up{${pod}}`, values: '1 0x10' }], at: '6m' },
  {
    alert: 'WireTailMissesHigh',
    series: [
      { series: 'wire_tail_reads_total{from="tail"}', values: '0+60x60' },
      { series: 'wire_tail_reads_total{from="db"}', values: '0+120x60' },
    ],
    at: '45m',
  },
  {
    alert: 'WireShedding',
    series: [
      { series: 'wire_refused_total{reason="overloaded"}', values: '0+120x20' },
      { series: 'wire_waiters_refused_total', values: '0x20' },
    ],
    at: '15m',
  },
  {
    // reads below the tail past READ_DB_CONCURRENCY_MAX are shedding too
    alert: 'WireShedding',
    series: [
      { series: 'wire_refused_total{reason="database_reads"}', values: '0+120x20' },
      { series: 'wire_waiters_refused_total', values: '0x20' },
    ],
    at: '15m',
  },
  {
    // a reader-only scrape: no wire_publishes_total at all
    alert: 'WireBudgetsRefusingHeavily',
    series: [
      { series: 'wire_refused_total{reason="reads"}', values: '0+600x40' },
      { series: 'wire_refused_total{reason="overloaded"}', values: '0x40' },
      { series: 'wire_tail_reads_total{from="tail"}', values: '0+1200x40' },
    ],
    at: '25m',
  },
  {
    alert: 'WireSweeperStalled',
    series: [{ series: 'wire_sweep_last_success_timestamp_seconds{sweep="purge-expired"}', values: '0x60' }],
    at: '35m',
  },
  {
    alert: 'WireSweepFailing',
    series: [{ series: 'wire_sweep_runs_total{sweep="purge-expired", outcome="failed"}', values: '0 1 2 3 4 5' }],
    at: '5m',
  },
  {
    // the follow-lock holder reports the board; the other replicas report 0
    alert: 'WireAggregatorFollowStalled',
    series: [
      { series: 'wire_aggregator_boards_stalled{pod="wire-aggregator-0", instance="10.0.0.10:4000"}', values: '0 1x10' },
      { series: 'wire_aggregator_boards_stalled{pod="wire-aggregator-1", instance="10.0.0.11:4000"}', values: '0x10' },
    ],
    at: '8m',
  },
]

/** A busy, healthy board for 60 minutes: the sweeper's last success keeps up with the clock (60 s per step). */
export const HEALTHY: Series[] = [
  { series: 'wire_publishes_total{code="200"}', values: '0+600x60' },
  { series: 'wire_publishes_total{code="429"}', values: '0+1x60' },
  ...['0.005', '0.5', '2.5', '+Inf'].map((le) => ({ series: `wire_publish_duration_seconds_bucket{le="${le}"}`, values: '0+600x60' })),
  ...['0.01', '0.25', '2.5', '+Inf'].map((le) => ({ series: `wire_wake_to_response_seconds_bucket{le="${le}"}`, values: '0+60x60' })),
  { series: 'wire_identity_network_up{pod="wire-writer-0"}', values: '1x60' },
  { series: `wire_redis_up{${pod}}`, values: '1x60' },
  { series: `wire_waiting_pollers{${pod}}`, values: '12000x60' },
  { series: `wire_waiting_pollers_max{${pod}}`, values: '20000x60' },
  { series: 'wire_waiting_pollers{pod="wire-agents-0", instance="10.0.0.9:4000"}', values: '0x60' },
  { series: 'wire_waiting_pollers_max{pod="wire-agents-0", instance="10.0.0.9:4000"}', values: '0x60' },
  { series: `nodejs_eventloop_lag_p99_seconds{${pod}}`, values: '0.02x60' },
  { series: `wire_replica_lag_signals{${pod}}`, values: '0 3 0 0 5 0x56' },
  // the replica unreachable for a minute (a restart) just before the 20m evaluation: under the alert's 2 minutes
  { series: `wire_replica_up{${pod}}`, values: '1x18 0 0 1x40' },
  { series: 'wire_tail_reads_total{from="tail"}', values: '0+6000x60' },
  { series: 'wire_tail_reads_total{from="db"}', values: '0+60x60' },
  { series: 'wire_refused_total{reason="overloaded"}', values: '0x60' },
  { series: 'wire_refused_total{reason="reads"}', values: '0+30x60' },
  { series: 'wire_waiters_refused_total', values: '0x60' },
  { series: 'wire_sweep_last_success_timestamp_seconds{sweep="purge-expired"}', values: '0+60x60' },
  { series: 'wire_sweep_runs_total{sweep="purge-expired", outcome="complete"}', values: '0+2x60' },
  { series: 'wire_sweep_runs_total{sweep="purge-expired", outcome="failed"}', values: '0x60' },
  // a followed board stalled for 3 minutes just before the 20m evaluation (a board restarting): under the alert's 5 minutes
  { series: 'wire_aggregator_boards_stalled{pod="wire-aggregator-0", instance="10.0.0.10:4000"}', values: '0x17 1x3 0x39' },
]

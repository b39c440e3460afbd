import client from 'prom-client'

/**
 * Process-wide Prometheus metrics (prom-client's default registry), served on /metrics by every
 * role. Names are prefixed `wire_`; labels stay low-cardinality (codes, kinds — never ids).
 */
export const registry = client.register
client.collectDefaultMetrics({ register: registry })

export const metrics = {
  publishes: new client.Counter({ name: 'wire_publishes_total', help: 'Publish requests by result code', labelNames: ['code'] }),
  publishSeconds: new client.Histogram({
    name: 'wire_publish_duration_seconds',
    help: 'Publish latency, request to acknowledgement',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  }),
  batchSize: new client.Histogram({ name: 'wire_batch_size', help: 'Signals per committed batch', buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500] }),
  wakes: new client.Counter({ name: 'wire_feed_wakes_total', help: 'Wake-ups received by readers (bus, resync, timer)', labelNames: ['source'] }),
  feedQueries: new client.Counter({ name: 'wire_feed_queries_total', help: 'Feed queries to the read database', labelNames: ['kind'] }),
  waiting: new client.Gauge({ name: 'wire_waiting_pollers', help: 'Long-polls waiting now' }),
  tailHits: new client.Counter({ name: 'wire_tail_reads_total', help: 'Feed reads by where they were answered', labelNames: ['from'] }),
  tailSize: new client.Gauge({ name: 'wire_tail_signals', help: 'Signals held in the reader tail' }),
  wakeToResponse: new client.Histogram({
    name: 'wire_wake_to_response_seconds',
    help: 'From the tail advancing to a waiting long-poll being answered',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  }),
  replicaLagSignals: new client.Gauge({ name: 'wire_replica_lag_signals', help: 'Known head minus the reader tail head (signals not yet replayed)' }),
}

import client from 'prom-client'

/** What the aggregator's gauges read when scraped (the process's one aggregator). */
export interface AggregatorGauges {
  proxiedInFlight(): number
  searchesWaiting(): number
  boardsFollowed(): number
  followBytesHeld(): number
  followLagSeconds(): number
  boardsStalled(): number
  /** The proxy's byte budget: what it counted (apps/aggregator/proxy-budget.ts) and the boards over it now. */
  proxyBudget(): { bytes: number; waitedMs: number; waited: number; refused: number; over: number }
}

let source: AggregatorGauges | null = null
const gauge = (name: string, help: string, read: (g: AggregatorGauges) => number) =>
  new client.Gauge({
    name,
    help,
    collect() {
      this.set(source ? read(source) : 0)
    },
  })

gauge('wire_aggregator_proxied_in_flight', 'Proxied requests in flight (waiting long-polls included)', (g) => g.proxiedInFlight())
gauge('wire_aggregator_searches_waiting', 'Search long-polls waiting for a match', (g) => g.searchesWaiting())
gauge(
  'wire_aggregator_boards_followed',
  'Boards this process follows for the search index (0 on the replicas not holding the follow lock)',
  (g) => g.boardsFollowed(),
)

gauge(
  'wire_aggregator_follow_bytes_held',
  'Decoded bytes of followed pages held now, every board together (at most AGGREGATOR_FOLLOW_MAX_BYTES)',
  (g) => g.followBytesHeld(),
)

// how far search is behind its boards, without a label per board (AGGREGATOR_MAX_BOARDS of them): the worst, and how many stalled
gauge(
  'wire_aggregator_follow_lag_seconds',
  'Longest time since a followed board (not marked down) last answered its follower a page or an empty long-poll, over every such board (0 on the replicas not holding the follow lock)',
  (g) => g.followLagSeconds(),
)
gauge(
  'wire_aggregator_boards_stalled',
  'Followed boards (not marked down) whose follower has completed no page read for AGGREGATOR_FOLLOW_STALLED_SECONDS',
  (g) => g.boardsStalled(),
)

gauge(
  'wire_aggregator_proxy_boards_over_budget',
  'Boards over AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND now: their proxied answers wait and new requests to them are refused',
  (g) => g.proxyBudget().over,
)

type BudgetCounts = ReturnType<AggregatorGauges['proxyBudget']>
/** A counter of the watched aggregator's byte budget, read when scraped (its counts are plain numbers, bumped per chunk). */
const budgetCounter = (name: string, help: string, read: (b: BudgetCounts) => number) =>
  new client.Counter({
    name,
    help,
    collect() {
      this.reset()
      if (source) this.inc(read(source.proxyBudget()))
    },
  })

budgetCounter(
  'wire_aggregator_proxy_board_bytes_total',
  "Bytes read from boards for proxied answers and charged to each board's budget (while AGGREGATOR_PROXY_BOARD_BYTES_PER_SECOND is on)",
  (b) => b.bytes,
)
budgetCounter(
  'wire_aggregator_proxy_throttled_seconds_total',
  "Seconds proxied answers waited for their board's budget, every answer's waits summed",
  (b) => b.waitedMs / 1000,
)
new client.Counter({
  name: 'wire_aggregator_proxy_throttled_total',
  help: "Proxied requests held to their board's byte budget, by outcome (waited: its answer waited at least once; refused: 503 before any work)",
  labelNames: ['outcome'],
  collect() {
    this.reset()
    const b = source?.proxyBudget()
    this.inc({ outcome: 'waited' }, b?.waited ?? 0)
    this.inc({ outcome: 'refused' }, b?.refused ?? 0)
  },
})

/** The counters a scrape reports from now on. */
export const watchAggregator = (g: AggregatorGauges) => void (source = g)

/** Refusals and outcomes of registration, by reason. */
export const registrations = new client.Counter({
  name: 'wire_aggregator_registrations_total',
  help: 'Registration attempts by outcome (registered, refreshed, or the refusal reason)',
  labelNames: ['outcome'],
})

/** Followed signals not indexed because they break the protocol, by reason (shape, id, uri, payload, ttl, time, tags). */
export const refusedSignals = new client.Counter({
  name: 'wire_aggregator_signals_refused_total',
  help: 'Followed signals not indexed because they break the protocol, by reason',
  labelNames: ['reason'],
})

/** Followed pages dropped before they were read whole, past the process's budget of bytes (AGGREGATOR_FOLLOW_MAX_BYTES). */
export const followPagesShed = new client.Counter({
  name: 'wire_aggregator_follow_pages_dropped_total',
  help: 'Followed pages dropped past AGGREGATOR_FOLLOW_MAX_BYTES (read again after a backoff)',
})

/** Recheck passes over the registry (pg-boss's job), by outcome: an operator sees them stop while the database is unreachable. */
export const recheckRuns = new client.Counter({
  name: 'wire_aggregator_recheck_runs_total',
  help: 'Recheck passes over the registry by outcome (complete, failed)',
  labelNames: ['outcome'],
})

/** Page reads of followed boards, by outcome: each shown from 0. */
export const followReads = new client.Counter({
  name: 'wire_aggregator_follow_reads_total',
  help: 'Page reads of followed boards by outcome (page: signals indexed, empty: a long-poll answered with nothing new, failed: no answer in time, an error or a dropped page; read again after a backoff)',
  labelNames: ['outcome'],
})
for (const outcome of ['page', 'empty', 'failed']) followReads.inc({ outcome }, 0)

import client from 'prom-client'
import t from 'tap'
import { HotHistogram } from '../../libs/shared/metrics/hot-histogram.js'
import { metrics, registry } from '../../libs/shared/metrics/index.js'

// The publish latency is observed on every publish by HotHistogram instead of prom-client's
// Histogram; a scrape must not be able to tell them apart.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/** Values on every bound, between them, below the first and above the last. */
function values(n: number): number[] {
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  return [0, ...BUCKETS, ...BUCKETS.map((b) => b * 1.0001), 3, 1e6, ...Array.from({ length: n }, () => next() ** 3 * 4)]
}

t.test('a scrape reads the same text as prom-client’s histogram given the same values', async (t) => {
  const ours = new client.Registry()
  const theirs = new client.Registry()
  const oursOpen = new client.Registry<client.OpenMetricsContentType>()
  const theirsOpen = new client.Registry<client.OpenMetricsContentType>()
  oursOpen.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE)
  theirsOpen.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE)
  const hot = new HotHistogram('x_seconds', 'Some latency', BUCKETS, ours)
  oursOpen.registerMetric(hot as unknown as client.Metric)
  const reference = new client.Histogram({ name: 'x_seconds', help: 'Some latency', buckets: BUCKETS, registers: [theirs, theirsOpen] })
  t.equal(await ours.metrics(), await theirs.metrics(), 'nothing observed')
  for (const v of values(5000)) {
    hot.observe(v)
    reference.observe(v)
  }
  const text = await ours.metrics()
  t.equal(text, await theirs.metrics(), 'the Prometheus text')
  t.match(text, /x_seconds_bucket\{le="\+Inf"\} 5025\n/, 'every value counted once')
  t.equal(JSON.stringify(await ours.getMetricsAsJSON()), JSON.stringify(await theirs.getMetricsAsJSON()), 'the JSON form')
  t.equal(await oursOpen.metrics(), await theirsOpen.metrics(), 'the OpenMetrics text')
  ours.resetMetrics()
  theirs.resetMetrics()
  t.equal(await ours.metrics(), await theirs.metrics(), 'after a reset')
  hot.observe(0.002)
  reference.observe(0.002)
  t.equal(await ours.metrics(), await theirs.metrics(), 'a value after a reset')
})

t.test('a value that is not a finite number is refused, as prom-client refuses it, and nothing is counted', async (t) => {
  const r = new client.Registry()
  const hot = new HotHistogram('y_seconds', 'h', BUCKETS, r)
  for (const v of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) t.throws(() => hot.observe(v), TypeError)
  t.match(await r.metrics(), /y_seconds_count 0\n/)
})

t.test('buckets that do not increase are refused; a name is registered once', async (t) => {
  const r = new client.Registry()
  t.throws(() => new HotHistogram('z', 'h', [1, 1], r), /increase/)
  new HotHistogram('w', 'h', [1], r)
  t.throws(() => new HotHistogram('w', 'h', [1], r), /already been registered/)
})

t.test('the board’s publish latency is one in the process registry', async (t) => {
  t.equal(registry.getSingleMetric('wire_publish_duration_seconds'), metrics.publishSeconds as unknown)
  const before = /wire_publish_duration_seconds_count (\d+)/.exec(await registry.metrics())![1]
  metrics.publishSeconds.observe(0.003)
  t.equal(/wire_publish_duration_seconds_count (\d+)/.exec(await registry.metrics())![1], String(Number(before) + 1))
})

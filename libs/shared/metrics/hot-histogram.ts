import type client from 'prom-client'

/**
 * A histogram without labels for what is observed on every request (a publish's latency).
 * observe() finds a bucket and adds three numbers: prom-client's Histogram, on every call, builds
 * a closure and a labels object, hashes the labels and reads its bucket by the bound's string
 * (~12,000 instructions a publish, bench/results/instructions-39-publish.md). A scrape reads it
 * exactly as it would read prom-client's own (the same text: test/metrics/hot-histogram.test.ts);
 * it is registered in prom-client's registry as one of its metrics.
 */
export class HotHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly name: string
  readonly help: string
  private readonly bounds: readonly number[]
  /** Observations per bucket (not cumulative); the last is above every bound (+Inf). */
  private readonly counts: Float64Array
  private sum = 0
  private count = 0
  /** As prom-client's: its one series is there from the start, gone after a reset until the next value. */
  private shown = true

  constructor(name: string, help: string, bounds: readonly number[], registry: Pick<client.Registry, 'registerMetric'>) {
    this.name = name
    this.help = help
    this.bounds = bounds
    if (bounds.some((b, i) => i > 0 && b <= bounds[i - 1]!)) throw new Error(`${name}: buckets must increase`)
    this.counts = new Float64Array(bounds.length + 1)
    registry.registerMetric(this as unknown as client.Metric)
  }

  /** As prom-client's: a value that is not a finite number is refused. */
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
    const b = this.bounds
    let i = 0
    while (i < b.length && value > b[i]!) i++
    this.counts[i]!++
    this.sum += value
    this.count++
    this.shown = true
  }

  /** What prom-client's registry reads at a scrape: the buckets cumulative, then the sum and the count. */
  async get() {
    if (!this.shown) return { name: this.name, help: this.help, type: this.type, values: [], aggregator: this.aggregator }
    const bucket = `${this.name}_bucket`
    let cumulative = 0
    const values: Array<{ value: number; metricName: string; exemplar?: null; labels: Record<string, string | number> }> = []
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += this.counts[i]!
      values.push({
        value: cumulative,
        metricName: bucket,
        exemplar: null,
        labels: { le: i < this.bounds.length ? this.bounds[i]! : '+Inf' },
      })
    }
    values.push({ value: this.sum, metricName: `${this.name}_sum`, labels: {} })
    values.push({ value: this.count, metricName: `${this.name}_count`, labels: {} })
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  reset(): void {
    this.counts.fill(0)
    this.sum = 0
    this.count = 0
    this.shown = false
  }
}

import { failoverDrill, type DrillResult } from './lib/failover-drill.js'
import { round } from './lib/load.js'
import { Cleanup } from './lib/pg-cluster.js'

// npm run bench:failover: the failover drill (bench/lib/failover-drill.ts) RUNS times per mode,
// synchronous and asynchronous standby alternating so both see the same machine: a primary and a
// streaming standby of their own (ports 5454 and 5455), the fleet as processes, PUBLISHERS
// publishers at PER_SECOND each, the primary killed after BEFORE_MS, AFTER_MS more of publishing on
// the promoted standby. Asynchronous runs cut the standby off LAG_MS before the kill (the standby
// "behind" when the primary dies). Prints, per run: acknowledged, lost, cursor gaps, followers
// caught up, publish outage; and the publish latency, throughput and writer CPU per publish before
// the kill (the group commit on, as always), sync against async. Needs root (PostgreSQL's tools).
// Settings: RUNS (3), PUBLISHERS (16), PER_SECOND (19: ~300/s in all), BEFORE_MS (15000),
// AFTER_MS (15000), LAG_MS (4000).

const env = (k: string, d: number) => Number(process.env[k] ?? d)
const RUNS = env('RUNS', 3)
const out = (s: string) => process.stdout.write(`${s}\n`)

const row = (r: DrillResult, i: number) =>
  `| ${r.mode} | ${i + 1} | ${r.attempted} | ${r.acknowledged} | ${r.statuses['503'] ?? 0} | ${r.lost} | ${r.lostButServed} | ${r.gaps} | ${r.caughtUp}/${r.followers} | ${round(r.outageSeconds, 2)} | ${round(r.unavailableSeconds, 2)} | ${r.p50} | ${r.p99} | ${round(r.ackPerSecond, 0)} | ${round(r.writerCpuMsPerPublish, 3)} |`

async function main() {
  const results: DrillResult[] = []
  for (let i = 0; i < RUNS; i++)
    for (const mode of ['sync', 'async'] as const) {
      const cleanup = new Cleanup()
      try {
        const r = await failoverDrill(cleanup, {
          mode,
          ports: [5454, 5455],
          publishers: env('PUBLISHERS', 16),
          perSecond: env('PER_SECOND', 19),
          beforeMs: env('BEFORE_MS', 15_000),
          afterMs: env('AFTER_MS', 15_000),
          lagMs: env('LAG_MS', 4000),
          note: (line) => process.stderr.write(`${line}\n`),
        })
        results.push(r)
        const odd = r.results.filter((f) => f.errors).map((f) => `${f.name}: ${JSON.stringify(f.errorKinds)}`)
        if (odd.length) process.stderr.write(`follower errors: ${odd.join('; ')}\n`)
      } finally {
        await cleanup.run()
      }
    }
  out(
    '| standby | run | publishes | acknowledged | 503 | acknowledged lost | lost but served | cursor gaps | followers caught up | publish outage s | 503 window s | p50 ms | p99 ms | acked/s | writer CPU ms/publish |',
  )
  out('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const mode of ['sync', 'async'] as const) results.filter((r) => r.mode === mode).forEach((r, i) => void out(row(r, i)))
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`)
    process.exit(1)
  },
)

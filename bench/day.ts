import { DEFAULT_SHAPE, parseTtlMix } from './lib/day-rows.js'
import { projectDay, measuredTable } from './lib/day-report.js'
import { runDay, type DayOptions } from './lib/day-run.js'
import { summarize } from './lib/day-summary.js'

// npm run bench:day: a day of traffic, stored and swept, scaled to this machine. A primary
// and a streaming standby of its own (ports 5464 and 5465), the board's schema, one writer lane
// publishing RATE real signals/s through the writer's own statement, the simulated clock moving
// with the feed (DAY_ROWS signals make a simulated day: 1,000,000 by default, 432 M at 5,000/s),
// partitions scaled to six simulated hours, and the sweeper's jobs on that clock every SWEEP_MS.
// Prints the measured table, then the day at 5,000/s projected from it with its assumptions.
// Needs root (PostgreSQL's tools). Run it under `flock /tmp/bench.lock`.
// Settings: DAY_ROWS (1000000), SIM_HOURS (66), RATE (5000; 0: as fast as commits go), MAX_BATCH
// (500), GRACE_SECONDS (86400), TTL_MIX (3600:0.15,43200:0.8,86400:0.05), KEY_SHARE (0; 1: every
// publish with an Idempotency-Key, as the client library sends them), SWEEP_MS (1000),
// READS_PER_SECOND (20), DAY_PORTS (5464,5465). `--short`: the CI form (test/bench/day.test.ts):
// 16,000 signals a day for 48 h as fast as they commit, a quarter with a key, grace 0, TTL 1 h, in under 30 s.

const env = (k: string, d: number) => (process.env[k] === undefined ? d : Number(process.env[k]))

/** The CI form: small partitions, a grace of 0, so partitions drop within seconds. */
export const SHORT: Omit<DayOptions, 'note'> = {
  shape: { ...DEFAULT_SHAPE, dayRows: 16_000, ttlMix: [[3600, 1]], keyShare: 0.25 },
  simHours: 48,
  rate: 0,
  maxBatch: 500,
  graceSeconds: 0,
  sweepEveryMs: 200,
  readsPerSecond: 20,
  ports: [5464, 5465],
}

export function optionsFrom(argv: string[], note: (line: string) => void): DayOptions {
  if (argv.includes('--short')) return { ...SHORT, note }
  const ports = (process.env.DAY_PORTS ?? '5464,5465').split(',').map(Number) as [number, number]
  return {
    shape: {
      ...DEFAULT_SHAPE,
      dayRows: env('DAY_ROWS', DEFAULT_SHAPE.dayRows),
      ttlMix: process.env.TTL_MIX ? parseTtlMix(process.env.TTL_MIX) : DEFAULT_SHAPE.ttlMix,
      keyShare: env('KEY_SHARE', DEFAULT_SHAPE.keyShare),
    },
    simHours: env('SIM_HOURS', 66),
    rate: env('RATE', 5000),
    maxBatch: env('MAX_BATCH', 500),
    graceSeconds: env('GRACE_SECONDS', 86_400),
    sweepEveryMs: env('SWEEP_MS', 1000),
    readsPerSecond: env('READS_PER_SECOND', 20),
    ports,
    note,
  }
}

/** Runs the day and prints it; returns the summary and the projection (the test reads them). */
export async function dayBench(o: DayOptions, out: (line: string) => void) {
  const run = await runDay(o)
  const summary = summarize(run)
  const projection = projectDay(summary, o)
  out(`wire bench:day ${new Date().toISOString()}: ${o.simHours} simulated hours of ${o.shape.dayRows.toLocaleString('en')} signals a day`)
  out('')
  for (const line of measuredTable(summary, o)) out(line)
  out('')
  for (const line of projection.lines) out(line)
  out('')
  out(JSON.stringify({ summary, projection: projection.numbers }))
  return { run, summary, projection }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const note = (line: string) => process.stderr.write(`${line}\n`)
  dayBench(optionsFrom(process.argv.slice(2), note), (line) => process.stdout.write(`${line}\n`)).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${(err as Error).stack}\n`)
      process.exit(1)
    },
  )
}

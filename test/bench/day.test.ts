import t from 'tap'
import { dayBench, SHORT } from '../../bench/day.js'

// bench/day.ts in its short form (`npm run bench:day -- --short`): a primary and a streaming standby
// of the test's own, two simulated days of a small board published and swept on the fast clock.
// Asserts what the run did and the shape of what it prints, never how fast anything was (the
// benchmark's figures are for bench/results, under `flock /tmp/bench.lock`). Needs root, as the
// failover drill does (scripts/cluster.sh, scripts/replica.sh).

t.setTimeout(180_000)

t.test('the short day publishes, makes, waits for and drops partitions, and prints the table and the projection', async (t) => {
  const lines: string[] = []
  const { run, summary: x, projection } = await dayBench({ ...SHORT, ports: [5466, 5467], note: (l) => t.comment(l) }, (l) => lines.push(l))
  const total = Math.round((SHORT.shape.dayRows * SHORT.simHours) / 24)
  const width = SHORT.shape.dayRows / 4

  t.equal(x.inserts.signals, total, `every signal of ${SHORT.simHours} simulated hours published (${total})`)
  t.ok(x.inserts.perSecond > 0 && x.inserts.meanBatch >= 1 && x.inserts.commitMs.n > 0, 'commits counted')
  for (const k of ['writer', 'primary'] as const)
    t.ok(x.inserts.cpuUsPerSignal[k] > 0, `${k} CPU per signal measured (${x.inserts.cpuUsPerSignal[k]} µs)`)
  t.ok(x.inserts.walBytesPerSignal > 100, `WAL per signal measured (${x.inserts.walBytesPerSignal} bytes)`)
  t.match(x.machine.loadBefore, /^\d+\.\d+ \d+\.\d+ \d+\.\d+$/, 'the load average is recorded beside the figures')

  t.ok(x.partitions.made >= Math.floor(total / width), `partitions made ahead of the head (${x.partitions.made})`)
  t.ok(
    x.storage.keptRows <= x.partitions.carried,
    `the default partition holds only rows drops carried (${x.storage.keptRows} of ${x.partitions.carried}): no insert outran the partitions`,
  )
  t.equal(x.partitions.sweeperMade, 0, "the bench's scaled partitions stay ahead of the writer's and the sweeper's own")
  t.ok(x.partitions.dropped >= 1, `closed partitions dropped whole (${x.partitions.dropped}), each timed`)
  t.equal(x.partitions.detachMs.n, run.sweeps.filter((s) => s.purge.partitions.dropped).length)
  t.ok(x.partitions.waiting.length >= 1, `partitions younger than the 24 h floor waited for it (${x.partitions.waiting.join(', ')})`)
  t.same(x.partitions.held, [], 'none held: no partition has more pinned signals than a drop carries')
  t.ok(
    x.sweeper.rowsPurged <= x.partitions.carried,
    `rows deleted one by one (${x.sweeper.rowsPurged}) only among those a drop carried forward (${x.partitions.carried}): every other expired row left with its partition`,
  )
  t.ok(x.sweeper.rolledUp > 0 && x.sweeper.rolledUp <= total, 'the stats rollup counted what was published')
  const keyed = total * SHORT.shape.keyShare
  t.ok(
    Math.abs(x.inserts.keyed - keyed) <= 1,
    `${x.inserts.keyed} publishes carried an Idempotency-Key, looked up first and stored with the signal (a share of ${SHORT.shape.keyShare})`,
  )
  t.ok(
    x.sweeper.keysPurged > 0 && x.storage.keysRows > 0 && x.sweeper.keysPurged + x.storage.keysRows === x.inserts.keyed,
    `keys past their 24 h deleted (${x.sweeper.keysPurged}), the rest kept (${x.storage.keysRows})`,
  )

  for (const part of ['heap', 'index signals_pkey', 'index id (per partition)', 'tags heap', 'tags index'])
    t.ok(x.storage.perMillion[part]! > 0, `disk per million signals: ${part}`)
  t.ok(
    x.storage.bytesPerSignal > 300 && x.storage.bytesPerSignal < 10_000,
    `${x.storage.bytesPerSignal} bytes a signal: a payload of ~${SHORT.shape.payloadBytes} plus its indexes`,
  )
  t.ok(x.storage.statsRows > 0, 'stats_buckets measured')

  const samples = Object.values(x.phases).reduce((a, p) => a + p.lagSamples, 0)
  t.ok(samples >= 5, `the standby's lag sampled throughout (${samples} samples)`)
  t.same(run.watch.readErrors, [], 'every read on the standby answered')
  t.ok(run.watch.reads.length > 10, 'reads on the standby ran throughout')

  t.equal(projection.numbers.signals, 432_000_000, '5,000/s for 24 h is 432 M signals')
  t.same(projection.numbers.keptHours, [24, 30], 'grace 0, TTL 1 h: the 24 h floor plus up to a partition')
  t.ok(projection.numbers.dayGb > 0 && projection.numbers.primaryCores > 0, 'projected disk and CPU')

  t.ok(
    lines.includes('| Measured | Figure |') && lines.includes('| 5,000 signals/s for 24 h | Projected |'),
    'prints the measured table, then the projection',
  )
  t.ok(
    lines.some((l) => l.startsWith('| assumptions |')),
    'with its assumptions',
  )
  t.ok(
    lines.some((l) => l.startsWith('| partition dropped |')),
    "and the standby's lag while partitions dropped",
  )
  t.match(
    JSON.parse(lines.at(-1)!),
    { summary: { inserts: { signals: total } }, projection: { rate: 5000 } },
    'ends with the figures as JSON',
  )
})

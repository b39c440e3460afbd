import t, { type Test } from 'tap'
import { failoverDrill, type DrillResult } from '../../bench/lib/failover-drill.js'
import { Cleanup } from '../../bench/lib/pg-cluster.js'

// docs/operations.md "Failover", run for real: a primary and a streaming standby of the test's own
// (scripts/cluster.sh, scripts/replica.sh), a TCP switch standing where DNS or a pooler stands, the
// fleet as processes of the built code (writer, two readers, agents, sweeper, a private Redis), 16
// publishers and followers of every kind. Mid-run the primary is killed (`immediate`), the standby
// promoted and the switch repointed. `npm run bench:failover` runs the same drill longer, 3 times
// per mode, and prints the figures.

// two drills, each a fresh cluster, standby and fleet: about 20 s each on a quiet machine
t.setTimeout(240_000)

async function drill(t: Test, mode: 'sync' | 'async', ports: [number, number]) {
  const cleanup = new Cleanup()
  t.teardown(() => cleanup.run())
  const r = await failoverDrill(cleanup, {
    mode,
    ports,
    publishers: 16,
    perSecond: 8,
    beforeMs: 4000,
    afterMs: 4000,
    lagMs: 1500,
    note: (l) => t.comment(l),
  })
  t.comment(JSON.stringify({ ...r, results: undefined }))
  for (const f of r.results) if (f.errors) t.comment(`${f.name}: ${JSON.stringify(f.errorKinds)}`)
  return r
}

const common = (t: Test, r: DrillResult) => {
  t.ok(r.acknowledged > 200, `${r.acknowledged} of ${r.attempted} publishes acknowledged`)
  t.same(
    Object.keys(r.statuses).filter((s) => s !== '200' && s !== '503'),
    [],
    `publishes answer 200 or 503 only, never a 500 or a hang: ${JSON.stringify(r.statuses)}`,
  )
  t.equal(r.badUnavailable, 0, 'every 503 says Retry-After and whether the signal was stored (outcome)')
  t.ok(
    r.outageSeconds >= 0 && r.outageSeconds < 10,
    `the writer reconnected by itself: publishes acknowledged again ${r.outageSeconds} s after the kill`,
  )
  t.equal(r.gaps, 0, 'no follower missed a signal the promoted board holds')
  t.equal(r.caughtUp, r.followers, `every follower caught up (${r.followers})`)
  t.ok(r.fleetAlive, 'no process of the fleet died')
}

t.test('synchronous standby: nothing acknowledged is lost, no follower skips', async (t) => {
  const r = await drill(t, 'sync', [5450, 5451])
  t.equal(r.durabilityBefore, true, 'the writer reported a synchronous standby on /readyz')
  common(t, r)
  t.equal(r.lost, 0, 'no acknowledged signal was lost')
  t.equal(r.lostButServed, 0, 'no follower received a signal the board lost')
})

t.test('asynchronous standby, cut off before the kill: acknowledged signals lost and counted, no follower skips', async (t) => {
  const r = await drill(t, 'async', [5452, 5453])
  t.equal(r.durabilityBefore, false, 'the writer reported no synchronous standby on /readyz')
  common(t, r)
  t.ok(r.lost > 0, `${r.lost} acknowledged signals never reached the standby (the documented trade-off)`)
  t.ok(r.lostButServed > 0, `followers had received ${r.lostButServed} of them: their cursors passed the lost stretch`)
})

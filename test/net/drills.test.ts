import t from 'tap'
import { DRILLS } from '../../bench/lib/drill/drills.js'
import { SHORT_DRILL_ENV, startNetFleet } from '../../bench/lib/drill/fleet.js'
import { canMakeHosts } from '../../bench/lib/drill/hosts.js'
import { runDrill } from '../../bench/lib/drill/runner.js'

// The network drills' short form (`npm run drill` is the long one, every deadline at its default):
// the fleet on hosts of its own (network namespaces: PostgreSQL primary and replica, Redis, the
// writer, two readers, the agents process, the sweeper, the aggregator and a second board it
// follows), each drill one fault under load, its
// deadlines a few times shorter than their defaults. Every drill asserts the promise: nothing
// acknowledged lost, no follower skipped, every follower caught up after the heal, every process
// ready again; and what the fleet must do around that fault. Waits are on state, with deadlines
// far above what a quiet machine needs.

t.setTimeout(600_000)

const can = await canMakeHosts()
t.test('the network drills', { skip: can === true ? false : `skipped: ${can}` }, async (t) => {
  const fleet = await startNetFleet(SHORT_DRILL_ENV)
  t.teardown(() => fleet.close())
  for (const d of DRILLS)
    await t.test(d.name, async (t) => {
      const r = await runDrill(fleet, d, { detectMs: 20_000, holdMs: 500, recoverMs: 30_000 })
      t.comment(JSON.stringify({ ...r, checks: undefined }))
      t.ok(r.acknowledged > 0, `${r.acknowledged} of ${r.publishes} publishes acknowledged`)
      t.same(
        Object.keys(r.refused).filter((s) => s !== '503'),
        [],
        `publishes answer 200 or 503, never an error or a hang: ${JSON.stringify(r.refused)}`,
      )
      t.equal(r.lost, 0, 'no acknowledged publish lost')
      t.equal(r.unindexed, 0, "every acknowledged publish in the aggregator's index")
      t.equal(r.skipped, 0, 'no follower skipped a signal')
      t.equal(r.wentBack, 0, 'no cursor went back')
      t.equal(r.caughtUp, r.followers, 'every follower caught up after the heal')
      if (d.shows) t.not(r.detectS, null, `an operator could see the fault: ${r.saw}`)
      t.not(r.recoverS, null, 'a publish made after the heal reached every follower')
      for (const c of r.checks) t.ok(c.ok, c.what)
      t.ok(r.ready, 'every process ready again, none restarted')
    })
})

import t from 'tap'
import { startStack } from '../helpers/stack.js'

// Whether a synchronous standby confirms commits, as a writer shows it: /readyz, the metric and the
// start log. This machine's PostgreSQL has no standby; test/fleet/failover.test.ts runs a primary
// with a synchronous standby and checks that /readyz says so.

t.test('without a synchronous standby: /readyz, wire_db_synchronous_standby and the start log say so', async (t) => {
  const s = await startStack(t)
  const ready = (await s.app.inject({ url: '/readyz' })).json()
  t.match(ready, { ok: true, durability: { synchronousStandby: false, synchronousCommit: String, standbyNames: '' } })
  const metrics = (await s.app.inject({ url: '/metrics' })).body
  t.match(metrics, /^wire_db_synchronous_standby 0$/m, 'the gauge reads 0')
  const line = s.logs
    .flatMap((l) =>
      l
        .split('\n')
        .filter(Boolean)
        .map((x) => JSON.parse(x)),
    )
    .find((l) => l.durability)
  t.match(line, { level: 30, msg: /no synchronous standby confirms commits/, durability: { synchronousStandby: false } }, 'logged at start')
})

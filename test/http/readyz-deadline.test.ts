import Fastify from 'fastify'
import t from 'tap'
import { healthRoutes, READY_DEADLINE_MS } from '../../libs/shared/http/index.js'

// /readyz answers within READY_DEADLINE_MS whatever its check does: a role whose database link
// stalled answered no probe at all (the network drills, docs/operations.md), where an orchestrator
// needs a 503 within its probe timeout (3 s in deploy/k8s) to take the process out of rotation.

t.test('a readiness check that never finishes answers 503 at the deadline, and the next check runs afresh', async (t) => {
  let hang = true
  const app = Fastify()
  await app.register(healthRoutes, { ready: () => (hang ? new Promise(() => {}) : Promise.resolve({ ok: true })) })
  t.teardown(() => app.close())
  const late = await app.inject('/readyz')
  t.equal(late.statusCode, 503)
  t.same(late.json(), { ok: false, reason: `not ready within ${READY_DEADLINE_MS} ms` })
  t.ok(READY_DEADLINE_MS < 3000, 'under the probe timeout of deploy/k8s (3 s)')
  hang = false
  // the answer is cached for a second; the check after it is a new one
  let again = await app.inject('/readyz')
  for (const end = Date.now() + 10_000; again.statusCode !== 200 && Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 100))
    again = await app.inject('/readyz')
  }
  t.equal(again.statusCode, 200, 'ready again once the check answers')
})

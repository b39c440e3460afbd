import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'

// Load shedding: while the process is over its heap or event-loop-delay bound, requests get a fast
// JSON 503 unavailable with Retry-After (health and metrics still answer), and it serves again
// once the pressure is gone.

/** Reads GET /sw/signals (after `before`, each time) until it answers `status`; that answer. */
async function readUntil(s: Stack, status: number, before = () => {}): Promise<LightMyRequestResponse> {
  let res: LightMyRequestResponse | undefined
  const answered = async () => {
    before()
    res = await s.app.inject({ url: '/sw/signals' })
    return res.statusCode === status
  }
  await until(answered, 30_000, `GET /sw/signals to answer ${status}`)
  return res!
}

t.test('over the heap bound: 503 unavailable with Retry-After; health still answers', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { SHED_HEAP_USED_RATIO: '0.000001', SHED_EVENT_LOOP_DELAY_MS: '0' } })
  const res = await readUntil(s, 503)
  t.equal(res.json().error.code, 'unavailable')
  t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After')
  const pub = await s.publish({ $type: 'broadcast' })
  t.equal(pub.statusCode, 503, 'a publish is shed too')
  t.equal(pub.json().error.code, 'unavailable')
  t.equal((await s.app.inject({ url: '/healthz' })).statusCode, 200, 'liveness answers')
  const m = await s.app.inject({ url: '/metrics' })
  t.equal(m.statusCode, 200, 'metrics answer')
  t.match(m.body, /wire_refused_total\{reason="overloaded"\} [1-9]/, 'and count the refusals')
  t.same((await s.infra.primary.query(`select 1 from "${s.schema}".signals`)).rows, [], 'nothing was stored')
})

t.test('a blocked event loop sheds, then recovers', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { SHED_EVENT_LOOP_DELAY_MS: '100', SHED_HEAP_USED_RATIO: '0' } })
  t.equal((await s.app.inject({ url: '/sw/signals' })).statusCode, 200)
  // hold the loop in 300 ms slices until the sampler sees the delay
  const shed = await readUntil(s, 503, () => {
    const end = Date.now() + 300
    while (Date.now() < end);
  })
  t.equal(shed.json().error.code, 'unavailable')
  const back = await readUntil(s, 200)
  t.equal(back.statusCode, 200, 'served again once the loop is free')
})

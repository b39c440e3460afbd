import t from 'tap'
import { startStack } from '../helpers/stack.js'

// Load shedding: while the process is over its heap or event-loop-delay bound, requests get a fast
// JSON 503 unavailable with Retry-After (health and metrics still answer), and it serves again
// once the pressure is gone.

const until = async <T>(probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
  for (;;) {
    const v = await probe()
    if (ok(v)) return v
    await new Promise((r) => setTimeout(r, 25))
  }
}

t.test('over the heap bound: 503 unavailable with Retry-After; health still answers', async (t) => {
  const s = await startStack(t, { noRedis: true, env: { SHED_HEAP_USED_RATIO: '0.000001', SHED_EVENT_LOOP_DELAY_MS: '0' } })
  const res = await until(
    () => s.app.inject({ url: '/sw/signals' }),
    (r) => r.statusCode === 503,
  )
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
  const shed = await until(
    async () => {
      const end = Date.now() + 300
      while (Date.now() < end);
      return s.app.inject({ url: '/sw/signals' })
    },
    (r) => r.statusCode === 503,
  )
  t.equal(shed.json().error.code, 'unavailable')
  const back = await until(
    () => s.app.inject({ url: '/sw/signals' }),
    (r) => r.statusCode === 200,
  )
  t.equal(back.statusCode, 200, 'served again once the loop is free')
})

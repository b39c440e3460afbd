import type { AddressInfo } from 'node:net'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { hotCounts } from '../../libs/shared/metrics/index.js'
import { bodyOf, comparable, rawConnection, statusOf } from '../helpers/raw-http.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { until } from '../helpers/wait.js'
import { insertSignals } from '../sweeper/support.js'

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
  // shedding is the process doing its job: a warning without a stack, not an error
  const shed = s.logs
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown })
    .filter((l) => /overloaded/.test(JSON.stringify(l)))
  t.ok(shed.length > 0, 'the refusals are logged')
  t.same(
    shed.filter((l) => l.level !== 40 || l.err !== undefined),
    [],
    'each as a warning, without a stack',
  )
})

t.test('over the heap bound: a read its tail cannot answer gets the same 503 from the fast path as from fastify', async (t) => {
  const s = await startStack(t, {
    noRedis: true,
    env: { SHED_HEAP_USED_RATIO: '0.000001', SHED_EVENT_LOOP_DELAY_MS: '0', READER_TAIL_SIZE: '5' },
    seed: (infra, schema) => insertSignals(infra.primary, schema, { count: 20, createdSecondsAgo: 10, ttl: 3600 }),
  })
  await s.app.listen({ port: 0, host: '127.0.0.1' })
  const open = () => {
    const c = rawConnection((s.app.server.address() as AddressInfo).port)
    t.teardown(() => c.end())
    return c
  }
  // cursor 0 is below the 5-signal tail: the fast path sheds it once the process counts as overloaded
  const read = async (c: ReturnType<typeof open>) => {
    c.get('/sw/signals?cursor=0')
    await until(() => c.answers.length > 0, 5000, 'an answer')
    return c.answers.pop()!
  }
  let fast: Buffer | undefined
  await until(async () => statusOf((fast = await read(open()))) === 503, 30_000, 'the fast path to shed')
  const handed = hotCounts.fastPathHandedOver
  t.equal(statusOf((fast = await read(open()))), 503, 'shed again')
  t.equal(hotCounts.fastPathHandedOver, handed, 'by the fast path, not handed to fastify')
  const viaFastify = open()
  viaFastify.get('/sw/wire') // a first request not the fast path's: the connection is fastify's from here on
  await until(() => viaFastify.answers.length === 1, 5000, 'GET /sw/wire answered')
  const fastify = await read(viaFastify)
  // one error, two writers: the same status, Retry-After, CORS lines (a browser reads Retry-After only
  // when it is exposed) and body
  const retryAfter = (b: Buffer) => /\r\nretry-after: (\d+)\r\n/i.exec(comparable(b))?.[1]
  const cors = (b: Buffer) =>
    comparable(b)
      .split('\r\n')
      .filter((l) => /^access-control-/i.test(l))
      .map((l) => l.toLowerCase())
      .sort()
  t.same(
    [statusOf(fastify), retryAfter(fastify), cors(fastify), bodyOf(fastify)],
    [statusOf(fast), retryAfter(fast), cors(fast), bodyOf(fast)],
    '503: the same answer',
  )
  t.ok(
    cors(fastify).some((l) => l.startsWith('access-control-expose-headers:') && l.includes('retry-after')),
    'Retry-After exposed to browsers',
  )
  t.same(bodyOf(fast), { error: { code: 'unavailable', message: 'this process is overloaded; retry shortly' } })
  t.equal(retryAfter(fast), '2')
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

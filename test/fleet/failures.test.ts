import t from 'tap'
import pg from 'pg'
import { fleetSchema, json, metricOf, publish, startRedis, startReplica, startRole, tcpProxy, untilWaiting } from '../helpers/fleet.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// docs/architecture.md "Failure behaviour", row by row, with real processes and real faults.

// six fault scenarios, each with real processes and most with a fresh streaming replica: 25–60 s
// alone on a quiet machine, more when the suite shares two cores; the default 120 s is too tight
t.setTimeout(300_000)

const body = (res: Response): Promise<any> => res.json()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const idsIn = async (schema: string) => {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  try {
    return new Set((await c.query<{ id: string }>(`select id from "${schema}".signals`)).rows.map((r) => r.id))
  } finally {
    await c.end()
  }
}

t.test('Redis down: publishes succeed, delivery falls back to the timer, wake-ups recover by themselves', async (t) => {
  const redis = await startRedis(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: redis.url, WIRE_PG_SCHEMA: fleetSchema(t), WAKE_FALLBACK_POLL_MS: '2000' }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', env)
  const timedPoll = async (cursor: number) => {
    const t0 = Date.now()
    const page = json(`${reader.url}/sw/signals?cursor=${cursor}&wait=10`)
    await untilWaiting(reader, 1)
    const p0 = Date.now()
    const res = await publish(writer, { $type: 'broadcast', at: p0 })
    const answer = await body(res)
    const got = await page
    return { status: res.status, id: answer.signal?.id, got, ms: Date.now() - p0, total: Date.now() - t0 }
  }
  let cursor = (await json(`${reader.url}/sw/signals`)).nextCursor
  const before = await timedPoll(cursor)
  t.equal(before.got.signals[0]?.id, before.id)
  t.ok(before.ms < 1000, `with Redis: delivered in ${before.ms} ms`)
  cursor = before.got.nextCursor

  await redis.stop()
  const during = await timedPoll(cursor)
  t.equal(during.status, 200, 'publish succeeds with Redis down')
  t.equal(during.got.signals[0]?.id, during.id, 'and is delivered')
  t.ok(during.ms < 3500, `within the 2 s fallback interval: ${during.ms} ms`)
  cursor = during.got.nextCursor

  await redis.start()
  let after = await timedPoll(cursor)
  for (let i = 0; i < 10 && after.ms >= 1000; i++) after = await timedPoll(after.got.nextCursor) // reconnect backoff is ≤ 1 s
  t.equal(after.status, 200)
  t.ok(after.ms < 1000, `after Redis is back, wake-ups deliver in ${after.ms} ms again`)
})

t.test('replica replay paused: no "nothing new" below a known head, no skip, delivery after resume', async (t) => {
  const replica = await startReplica(t)
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', { ...env, DATABASE_REPLICA_URL: replica.url, WAKE_FALLBACK_POLL_MS: '10000' })
  let cursor = (await json(`${reader.url}/sw/signals`)).nextCursor as number
  const seen: string[] = []
  const acked: string[] = []

  await replica.pause()
  const waiting = json(`${reader.url}/sw/signals?cursor=${cursor}&wait=20`)
  await untilWaiting(reader, 1)
  for (let i = 0; i < 3; i++) acked.push((await body(await publish(writer, { $type: 'broadcast', i }))).signal.id)
  const published = Date.now()
  // the wake-up has told the reader about the new head; its replica has not replayed it
  await until(
    async () => (await metricOf(reader, 'wire_replica_lag_signals')) === 3,
    10_000,
    'the reader to know of 3 signals its replica lacks',
  )
  const polled = await json(`${reader.url}/sw/signals?cursor=${cursor}&wait=0`)
  t.same(
    polled.signals.map((s: { id: string }) => s.id),
    acked,
    'a plain poll below the known head is answered (from the primary), not with "nothing new"',
  )
  const longPoll = await waiting
  t.same(
    longPoll.signals.map((s: { id: string }) => s.id),
    acked,
    'the waiting long-poll is answered too, from the primary',
  )
  // before, the reader's tail only read its replica: a waiting long-poll was answered at its deadline
  t.ok(Date.now() - published < 10_000, `not at its 20 s deadline: ${Date.now() - published} ms after the publishes`)
  t.equal(await metricOf(reader, 'wire_replica_lag_signals'), 3, 'the replica is still 3 signals behind, and says so')
  for (const s of polled.signals) seen.push(s.id)
  cursor = polled.nextCursor

  for (let i = 3; i < 6; i++) acked.push((await body(await publish(writer, { $type: 'broadcast', i }))).signal.id)
  await replica.resume()
  for (let i = 6; i < 9; i++) acked.push((await body(await publish(writer, { $type: 'broadcast', i }))).signal.id)
  for (let i = 0; i < 20 && seen.length < acked.length; i++) {
    const page = await json(`${reader.url}/sw/signals?cursor=${cursor}&wait=2`)
    t.ok(page.nextCursor >= cursor, 'nextCursor never goes back')
    cursor = page.nextCursor
    for (const s of page.signals) seen.push(s.id)
  }
  t.same(seen, acked, 'every acknowledged signal, once, in order')
})

t.test('replica down: readers fall back to the primary and stay ready', async (t) => {
  const replica = await startReplica(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: fleetSchema(t) }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', { ...env, DATABASE_REPLICA_URL: replica.url })
  const { nextCursor } = await json(`${reader.url}/sw/signals`)
  await replica.stop()
  const res = await publish(writer, { $type: 'broadcast', text: 'replica is gone' })
  t.equal(res.status, 200, 'publishes are unaffected')
  const page = await json(`${reader.url}/sw/signals?cursor=${nextCursor}&wait=5`)
  t.equal(page.signals[0]?.payload.text, 'replica is gone', 'reads continue from the primary')
  const ready = await fetch(`${reader.url}/readyz`)
  t.equal(ready.status, 200, 'the reader stays ready while the primary can serve')
  t.equal((await fetch(`${reader.url}/sw/signals/${page.signals[0].id}`)).status, 200, 'by-id reads too')
})

t.test('primary down: publishes 503 unavailable with Retry-After, nothing half-written, reads continue', async (t) => {
  const replica = await startReplica(t)
  const proxy = await tcpProxy(t)
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: proxy.url, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema, SERVER_ADMIN_TOKEN: 'fleet-admin-token' }
  const writer = await startRole(t, 'writer', env)
  const reader = await startRole(t, 'reader', { ...env, DATABASE_REPLICA_URL: replica.url })
  const ok = await publish(writer, { $type: 'broadcast', text: 'before' })
  t.equal(ok.status, 200)
  const before = await json(`${reader.url}/sw/signals?wait=2&cursor=0`)
  t.equal(before.signals.length, 1)

  proxy.cut()
  const t0 = Date.now()
  const down = await publish(writer, { $type: 'broadcast', text: 'during' })
  t.equal(down.status, 503, 'publish fails closed')
  t.equal((await body(down)).error.code, 'unavailable')
  t.ok(Number(down.headers.get('retry-after')) >= 1, 'with Retry-After')
  t.ok(Date.now() - t0 < 5000, `quickly (${Date.now() - t0} ms)`)
  const admin = await fetch(`${writer.url}/sw/admin/wire`, { headers: { authorization: 'Bearer fleet-admin-token' } })
  t.equal(admin.status, 503, 'admin reads needing the primary are 503 too')
  t.equal((await body(admin)).error.code, 'unavailable')
  const read = await fetch(`${reader.url}/sw/signals`)
  t.equal(read.status, 200, 'reads continue from the replica')
  t.equal((await body(read)).signals.length, 1)

  proxy.restore()
  let after = await publish(writer, { $type: 'broadcast', text: 'after' })
  for (let i = 0; i < 10 && after.status !== 200; i++)
    await sleep(300), (after = await publish(writer, { $type: 'broadcast', text: 'after' }))
  t.equal(after.status, 200, 'publishes recover when the primary is back')
  const texts = [...(await idsIn(schema))].length
  t.equal(texts, 2, 'the failed publish left nothing behind')
})

t.test('SIGTERM on a writer: in-flight publishes finish; every acknowledged one is stored', async (t) => {
  const schema = fleetSchema(t)
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: schema, PUBLISH_RATE_LIMIT_MAX: '100000' }
  const writer = await startRole(t, 'writer', env)
  const acked: string[] = []
  let failed = 0
  const load = Array.from({ length: 8 }, async (_, p) => {
    for (let i = 0; i < 200; i++) {
      try {
        const res = await publish(writer, { $type: 'broadcast', p, i }, `term-${p}-token`)
        if (res.status === 200) acked.push((await body(res)).signal.id)
        else failed++
      } catch {
        failed++ // connection refused once the writer is gone: not acknowledged, may retry elsewhere
        return
      }
    }
  })
  await until(() => acked.length >= 40, 20_000, 'publishes under way') // the stop lands while all eight keep publishing
  const end = await writer.stop('SIGTERM')
  await Promise.all(load)
  if (!t.equal(end.code, 0, 'the writer exits cleanly')) t.comment(writer.proc.output().slice(-4000))
  t.ok(acked.length > 0, `${acked.length} publishes acknowledged before the stop (${failed} refused after)`)
  const stored = await idsIn(schema)
  t.same(
    acked.filter((id) => !stored.has(id)),
    [],
    'every acknowledged publish is committed',
  )
})

t.test('SIGKILL on a reader: its followers carry their cursor to another reader and miss nothing', async (t) => {
  const env = { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, WIRE_PG_SCHEMA: fleetSchema(t) }
  const writer = await startRole(t, 'writer', env)
  const [a, b] = await Promise.all([startRole(t, 'reader', env), startRole(t, 'reader', env)])
  let cursor = (await json(`${a!.url}/sw/signals`)).nextCursor as number
  const acked: string[] = []
  const seen: string[] = []
  for (let i = 0; i < 5; i++) acked.push((await body(await publish(writer, { $type: 'broadcast', i }))).signal.id)
  const first = await json(`${a!.url}/sw/signals?cursor=${cursor}&limit=3`)
  seen.push(...first.signals.map((s: { id: string }) => s.id))
  cursor = first.nextCursor
  await a!.stop('SIGKILL')
  for (let i = 5; i < 10; i++) acked.push((await body(await publish(writer, { $type: 'broadcast', i }))).signal.id)
  for (let i = 0; i < 10 && seen.length < acked.length; i++) {
    const page = await json(`${b!.url}/sw/signals?cursor=${cursor}&wait=2`)
    cursor = page.nextCursor
    seen.push(...page.signals.map((s: { id: string }) => s.id))
  }
  t.same(seen, acked, 'the other reader continues from the cursor: nothing skipped, nothing twice')
})

import { Redis } from 'ioredis'
import pg from 'pg'
import t, { type Test } from 'tap'
import { channels, localBus, type Invalidation } from '../../libs/shared/bus/index.js'
import { loadConfig } from '../../libs/shared/config/index.js'
import { openInfra, type Infra } from '../../libs/shared/context/index.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { metrics, registry } from '../../libs/shared/metrics/index.js'
import { startRedis, tcpProxy } from '../helpers/fleet.js'
import { assertServicesUp, dropSchema, TEST_DATABASE_URL, TEST_REDIS_URL, uniqueSchema } from '../helpers/services.js'
import { eventually } from '../helpers/wait.js'

// The wake-up bus between real processes' worth of connections: two Infra on one database stand
// for two processes of one board (each has its own Redis and LISTEN connections).

const quiet = createLogger('server', 'silent')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const gauge = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values[0]?.value
const received = async () => {
  const out: Record<string, number> = {}
  for (const v of (await metrics.busMessages.get()).values) out[`${v.labels.path}/${v.labels.outcome}`] = v.value
  return out
}
const delta = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)])
      .filter(([, v]) => v !== 0),
  )
const total = (d: Record<string, number>) => Object.values(d).reduce((a, b) => a + b, 0)

/** One process's connections to the board in `schema` (the first one migrates it). */
async function processOf(
  t: Test,
  schema: string,
  env: Record<string, string> = {},
): Promise<Infra & { heads: number[]; invalidations: Invalidation[] }> {
  const cfg = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, WIRE_PG_SCHEMA: schema, ...env })
  const infra = await openInfra(cfg, quiet, { migrate: true })
  t.teardown(() => infra.close())
  const heads: number[] = []
  const invalidations: Invalidation[] = []
  infra.bus.onWake((h) => heads.push(h))
  infra.bus.onInvalidation((m) => invalidations.push(m))
  return Object.assign(infra, { heads, invalidations })
}
function boardSchema(t: Test) {
  const schema = uniqueSchema('bus')
  t.teardown(() => dropSchema(schema))
  return schema
}

t.before(assertServicesUp)

t.test("this process's listeners hear a wake before publishWake returns, once per head", async (t) => {
  const bus = localBus()
  const heads: number[] = []
  bus.onWake((h) => heads.push(h))
  bus.publishWake(5)
  t.same(heads, [5], 'delivered synchronously')
  bus.publishWake(5)
  bus.publishWake(4)
  t.same(heads, [5, 4], 'a head seen already is not delivered again; an older one is (readers keep the maximum)')
  let refreshed = false
  bus.onInvalidation(async () => {
    await sleep(20) // a listener that takes a while: what is under test is that publishInvalidation waits for it
    refreshed = true
  })
  await bus.publishInvalidation({ kind: 'board' })
  t.ok(refreshed, "publishInvalidation waits for this process's listeners")
  await bus.close()
})

t.test('on PostgreSQL without Redis, wakes and invalidations reach another process by LISTEN/NOTIFY', async (t) => {
  const schema = boardSchema(t)
  const a = await processOf(t, schema)
  const b = await processOf(t, schema)
  t.equal(a.boardId, b.boardId, 'one board, one id')
  t.match(a.boardId, /^[0-9a-f]{32}$/)
  t.ok(await eventually(async () => (await gauge('wire_pg_listen_up')) === 1), 'both listening')
  a.bus.publishWake(41)
  t.same(a.heads, [41], 'the publisher heard it first, in process')
  t.ok(await eventually(() => b.heads.includes(41)), 'the other process heard it')
  await a.bus.publishInvalidation({ kind: 'signal', id: 'sig_1' })
  t.ok(await eventually(() => b.invalidations.length === 1), 'and the invalidation')
  t.same(b.invalidations, [{ kind: 'signal', id: 'sig_1' }])
})

t.test('with Redis and LISTEN both up a wake arrives once; with Redis stopped it still arrives', async (t) => {
  const redis = await startRedis(t)
  const schema = boardSchema(t)
  const a = await processOf(t, schema, { REDIS_URL: redis.url })
  const b = await processOf(t, schema, { REDIS_URL: redis.url })
  let resyncs = 0
  b.bus.onResync(() => resyncs++)
  t.ok(await eventually(async () => (await gauge('wire_redis_up')) === 1 && (await gauge('wire_pg_listen_up')) === 1), 'both paths up')

  const before = await received()
  a.bus.publishWake(100)
  // four copies cross the wire: a's own two echoes and b's two; exactly one of them is new
  t.ok(await eventually(async () => total(delta(await received(), before)) === 4), 'both paths carried it to both processes')
  const d = delta(await received(), before)
  t.equal((d['redis/delivered'] ?? 0) + (d['pg/delivered'] ?? 0), 1, 'delivered once')
  t.equal((d['redis/duplicate'] ?? 0) + (d['pg/duplicate'] ?? 0), 3, 'the other copies dropped')
  t.same(b.heads, [100], "b's listeners heard it once")
  t.same(a.heads, [100], "a's listeners heard it once (in process, not its own echoes)")

  await redis.stop()
  t.ok(await eventually(async () => (await gauge('wire_redis_up')) === 0), 'Redis is down')
  a.bus.publishWake(101)
  t.ok(await eventually(() => b.heads.includes(101)), 'the wake arrived by LISTEN/NOTIFY')
  await a.bus.publishInvalidation({ kind: 'rules' })
  t.ok(await eventually(() => b.invalidations.some((m) => m.kind === 'rules')), 'so did an invalidation')

  await redis.start()
  t.ok(await eventually(() => resyncs > 0, 10_000), 'Redis back: listeners are told messages may have been lost')
})

t.test('a LISTEN connection that drops comes back, and its listeners are told to re-check', async (t) => {
  const schema = boardSchema(t)
  const proxy = await tcpProxy(t)
  const a = await processOf(t, schema)
  const b = await processOf(t, schema, { DATABASE_URL: proxy.url }) // b reaches the primary through a cable we can cut
  let resyncs = 0
  b.bus.onResync(() => resyncs++)
  t.ok(await eventually(async () => (await gauge('wire_pg_listen_up')) === 1), 'both listening')
  proxy.cut()
  t.ok(await eventually(async () => (await gauge('wire_pg_listen_up')) === 0), "b's LISTEN connection is down")
  a.bus.publishWake(5) // lost for b: this is what the fallback poll is for
  proxy.restore()
  t.ok(await eventually(async () => (await gauge('wire_pg_listen_up')) === 1, 10_000), 'reconnected')
  t.ok(await eventually(async () => resyncs === 1), 'b was told messages may have been lost')
  a.bus.publishWake(6)
  t.ok(await eventually(() => b.heads.includes(6)), 'wakes flow again')
  t.notOk(b.heads.includes(5), 'the wake sent while b was cut off never arrived (the fallback poll covers it)')

  // closing while the primary is unreachable stops the reconnect attempts: if it did not, this
  // test file would never exit (tap fails it)
  proxy.cut()
  t.ok(await eventually(async () => (await gauge('wire_pg_listen_up')) === 0), 'cut off again')
  await b.bus.close()
  t.equal(await gauge('wire_pg_listen_up'), 1, 'a closed bus no longer reports')
})

t.test('two boards on one Redis and one PostgreSQL never hear each other', async (t) => {
  const one = boardSchema(t)
  const a = await processOf(t, one, { REDIS_URL: TEST_REDIS_URL })
  const b = await processOf(t, one, { REDIS_URL: TEST_REDIS_URL })
  const two = boardSchema(t)
  const other = await processOf(t, two, { REDIS_URL: TEST_REDIS_URL })
  const other2 = await processOf(t, two, { REDIS_URL: TEST_REDIS_URL })
  t.not(other.boardId, a.boardId, 'each board has its own random id')
  t.not(channels(other.boardId).wake, channels(a.boardId).wake)
  t.ok(await eventually(async () => (await gauge('wire_redis_up')) === 1 && (await gauge('wire_pg_listen_up')) === 1), 'all listening')
  const before = await received()
  a.bus.publishWake(7)
  t.ok(await eventually(async () => total(delta(await received(), before)) >= 4), "a's board heard it on both paths")
  t.ok(b.heads.includes(7))
  other.bus.publishWake(8)
  t.ok(await eventually(() => other2.heads.includes(8)), "the other board's second process heard it")
  t.ok(await eventually(async () => total(delta(await received(), before)) >= 8), "and it went round the other board's paths")
  t.same([other.heads, other2.heads], [[8], [8]], 'the other board heard only its own wake')
  t.notOk(a.heads.includes(8) || b.heads.includes(8), 'and the first board never heard it')
})

t.test('anything but a well-formed message from Redis or NOTIFY is dropped', async (t) => {
  const schema = boardSchema(t)
  const a = await processOf(t, schema, { REDIS_URL: TEST_REDIS_URL })
  t.ok(await eventually(async () => (await gauge('wire_redis_up')) === 1 && (await gauge('wire_pg_listen_up')) === 1), 'listening')
  const ch = channels(a.boardId)
  const r = new Redis(TEST_REDIS_URL)
  t.teardown(() => r.disconnect())
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await c.connect()
  t.teardown(() => c.end())
  const before = await received()
  for (const bad of ['-1', '1e9', 'abc', '9'.repeat(20)]) await r.publish(ch.wake, bad)
  for (const bad of ['{', '{"kind":"signal","n":"x"}', '{"kind":"nope","n":"x"}', '{"kind":"board"}', 'x'.repeat(600)])
    await r.publish(ch.invalidate, bad)
  await c.query('select pg_notify($1, $2)', [ch.notify, 'not a head'])
  await c.query('select pg_notify($1, $2)', [ch.notify, '{"kind":"signal","id":{"x":1},"n":"y"}'])
  t.ok(await eventually(async () => (await received())['pg/invalid'] === (before['pg/invalid'] ?? 0) + 2), 'NOTIFY messages dropped')
  t.ok(await eventually(async () => (await received())['redis/invalid'] === (before['redis/invalid'] ?? 0) + 9), 'Redis messages dropped')
  t.same(a.heads, [], 'no wake delivered')
  t.same(a.invalidations, [], 'no invalidation delivered')
})

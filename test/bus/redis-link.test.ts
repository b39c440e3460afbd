import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { linkProxy } from '../../bench/lib/drill/proxy.js'
import { channels, redisClient } from '../../libs/shared/bus/index.js'
import type { PathSink } from '../../libs/shared/bus/path.js'
import { redisPath } from '../../libs/shared/bus/redis.js'
import { WindowLimiter } from '../../libs/shared/limits/window-batch.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { TEST_REDIS_URL } from '../helpers/services.js'
import { eventually, until } from '../helpers/wait.js'

// A link to Redis that stalls (no FIN, no RST) is found by the command deadline
// (REDIS_COMMAND_TIMEOUT_MS): the budgets count in this process meanwhile instead of waiting on
// Redis, the connection is dropped and made again, and the loss and the return are logged once
// each. Before, a budget's call waited on the dead connection, and every publish and read behind
// it with it (docs/operations.md "The network drills").

t.test('a stalled Redis link: budgets go on locally, the connection is made again, and both are logged', async (t) => {
  const target = new URL(TEST_REDIS_URL)
  const proxy = await linkProxy('127.0.0.1', { host: target.hostname, port: Number(target.port || 6379) })
  t.teardown(() => proxy.close())
  const lines: Array<{ level: number; msg: string }> = []
  const sink = new Writable({ write: (chunk, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) })
  const redis = redisClient(`redis://127.0.0.1:${proxy.port}`, createLogger('server', 'info', sink), {
    connectTimeoutMs: 500,
    keepAliveMs: 1000,
    commandTimeoutMs: 300,
  })
  t.teardown(() => redis.disconnect())
  await until(() => redis.status === 'ready', 5000, 'redis to be ready')
  // a limit of one per window in a key of its own: the second consume is refused wherever it is counted
  const prefix = `wire:linktest:${process.pid}:${Date.now()}`
  const limiter = new WindowLimiter({ keyPrefix: prefix, points: 1, duration: 60 }, redis)
  await limiter.consume('a')

  proxy.stall()
  const t0 = Date.now()
  const answered = await Promise.race([
    limiter.consume('b').then(
      () => 'granted',
      () => 'refused',
    ),
    new Promise((r) => setTimeout(() => r('hung'), 10_000).unref()),
  ])
  t.equal(answered, 'granted', 'a budget Redis does not answer is counted in this process, not left waiting')
  t.comment(`answered after ${Date.now() - t0} ms (deadline 300 ms)`)
  await until(() => redis.status !== 'ready', 10_000, 'the silent connection to be dropped')
  await until(() => lines.some((l) => l.msg === 'redis connection lost; trying again' && l.level === 40), 10_000, 'the loss to be logged')

  proxy.pass()
  await until(() => redis.status === 'ready', 10_000, 'a new connection once the link passes again')
  await until(() => lines.some((l) => l.msg === 'redis connection back'), 10_000, 'the return to be logged')
  t.equal(lines.filter((l) => l.msg === 'redis connection lost; trying again').length, 1, 'the loss logged once')
  await limiter.consume('c')
  const direct = redisClient(TEST_REDIS_URL, createLogger('server', 'silent'))
  t.teardown(() => direct.disconnect())
  await until(() => direct.status === 'ready', 5000, 'a direct connection')
  t.equal(await direct.get(`${prefix}:c`), '1', 'budgets count in Redis again')
})

async function directRedis(t: Test) {
  const direct = redisClient(TEST_REDIS_URL, createLogger('server', 'silent'))
  t.teardown(() => direct.disconnect())
  await until(() => direct.status === 'ready', 5000, 'a direct connection')
  return direct
}

/** Waits until Redis counts a subscriber on the board's wake channel (SUBSCRIBE answered, not only sent). */
async function subscribed(t: Test, boardId: string) {
  const direct = await directRedis(t)
  const count = async () => Number(((await direct.pubsub('NUMSUB', channels(boardId).wake)) as [string, number])[1])
  t.ok(await eventually(async () => (await count()) === 1, 10_000), 'subscribed in Redis')
}

// ioredis renews a subscription by itself after a reconnect (autoResubscribe), with a SUBSCRIBE
// whose promise nobody holds: closed while that SUBSCRIBE was out (shutdown, a test's teardown), the
// process got an unhandled "Connection is closed." rejection. The bus subscribes on every ready
// itself, and re-checks its feed only once the subscription is in place.
t.test('a subscription renewed after a reconnect: closed while its SUBSCRIBE is out, nothing is left unhandled', async (t) => {
  const target = new URL(TEST_REDIS_URL)
  const proxy = await linkProxy('127.0.0.1', { host: target.hostname, port: Number(target.port || 6379) })
  t.teardown(() => proxy.close())
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => void unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => void process.off('unhandledRejection', onUnhandled))
  let resyncs = 0
  const sink: PathSink = { wake() {}, invalidation() {}, resync: () => void resyncs++ }
  const boardId = `linktest${process.pid}a`
  const path = redisPath(`redis://127.0.0.1:${proxy.port}`, boardId, createLogger('server', 'silent'), sink)
  await subscribed(t, boardId)
  // Redis counts the subscriber when it runs the SUBSCRIBE; the path is healthy once it has read the answer (and its publishing connection is up)
  t.ok(await eventually(() => path.healthy()), 'healthy once subscribed')
  t.equal(resyncs, 0, 'the first subscription is no re-check')

  proxy.stallAt(Buffer.from('subscribe'))
  proxy.drop()
  await until(() => !path.healthy(), 5000, 'the lost connection to be noticed')
  await until(() => proxy.held() > 0, 10_000, 'the renewed SUBSCRIBE to be held on the link')
  t.equal(resyncs, 0, 'no re-check before the subscription is back (a wake between them would be missed)')
  await path.close()
  // a rejection nobody handles is reported once the microtasks after it have run
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r))
  t.same(unhandled.map(String), [], 'no unhandled rejection')
})

t.test('a subscription renewed after a reconnect re-checks the feed once it is in place', async (t) => {
  const target = new URL(TEST_REDIS_URL)
  const proxy = await linkProxy('127.0.0.1', { host: target.hostname, port: Number(target.port || 6379) })
  t.teardown(() => proxy.close())
  let resyncs = 0
  const wakes: string[] = []
  const sink: PathSink = { wake: (text) => void wakes.push(text), invalidation() {}, resync: () => void resyncs++ }
  const boardId = `linktest${process.pid}b`
  const path = redisPath(`redis://127.0.0.1:${proxy.port}`, boardId, createLogger('server', 'silent'), sink)
  t.teardown(() => path.close())
  await subscribed(t, boardId)
  proxy.drop()
  await until(() => resyncs === 1, 10_000, 'one re-check after the subscription is back')
  t.ok(await eventually(() => path.healthy()), 'healthy again (its publishing connection back too)')
  const direct = await directRedis(t)
  t.equal(await direct.publish(channels(boardId).wake, 'w'), 1, 'the renewed subscription hears the channel')
  await until(() => wakes.length === 1, 5000, 'the wake to arrive')
})

import { Writable } from 'node:stream'
import t from 'tap'
import { linkProxy } from '../../bench/lib/drill/proxy.js'
import { redisClient } from '../../libs/shared/bus/index.js'
import { WindowLimiter } from '../../libs/shared/limits/window-batch.js'
import { createLogger } from '../../libs/shared/log/index.js'
import { TEST_REDIS_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

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

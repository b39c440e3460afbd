import { Redis } from 'ioredis'
import { WireError } from '../../libs/shared/domain/index.js'
import t, { type Test } from 'tap'
import { SlotLimiter } from '../../libs/shared/limits/index.js'
import { TEST_REDIS_URL } from '../helpers/services.js'
import { until } from '../helpers/wait.js'

// Long-poll slots per client address: taken while a long-poll waits, given back when it ends,
// shared by every process on one Redis, a turn's takes and give-backs in one script call.

const prefix = () => `test:slots:${process.pid}:${Math.random().toString(36).slice(2, 8)}`

async function redis(t: Test) {
  const r = new Redis(TEST_REDIS_URL)
  t.teardown(() => r.disconnect())
  if (r.status !== 'ready') await new Promise((res) => r.once('ready', res))
  return r
}

const outcome = (p: Promise<void>) =>
  p.then(
    () => 'ok' as const,
    (e: unknown) => (e instanceof WireError && e.code === 'rate_limited' ? ('refused' as const) : ('error' as const)),
  )

t.test('two processes on one Redis never hold more than the limit for a key; a give-back frees a slot', async (t) => {
  const keyPrefix = prefix()
  const a = new SlotLimiter({ keyPrefix, points: 3, duration: 60 }, await redis(t))
  const b = new SlotLimiter({ keyPrefix, points: 3, duration: 60 }, await redis(t))
  const first = await Promise.all(
    [a.take('1.2.3.4'), a.take('1.2.3.4'), b.take('1.2.3.4'), b.take('1.2.3.4'), b.take('1.2.3.4')].map(outcome),
  )
  t.equal(first.filter((o) => o === 'ok').length, 3, 'three of five granted across both')
  t.equal(first.filter((o) => o === 'refused').length, 2, "the rest refused with the budget's WireError")
  t.equal(await outcome(a.take('5.6.7.8')), 'ok', 'another key has its own slots')
  a.give('1.2.3.4')
  t.equal(await outcome(b.take('1.2.3.4')), 'refused', 'a slot given back stays parked with its process for a moment')
  t.equal(await outcome(a.take('1.2.3.4')), 'ok', "where the key's next take reuses it")
  t.equal(await outcome(a.take('1.2.3.4')), 'refused', 'a key whose parked slot was taken again has none left to hand out')
  a.give('1.2.3.4')
  await until(async () => (await outcome(b.take('1.2.3.4'))) === 'ok', 5000, 'the other process gets the slot once it is unparked')
  t.equal(await outcome(b.take('1.2.3.4')), 'refused', 'and only that one')
})

t.test('a follower that polls again at once costs no Redis call: its parked slot is reused', async (t) => {
  const keyPrefix = prefix()
  const r = await redis(t)
  const s = new SlotLimiter({ keyPrefix, points: 2, duration: 60 }, r)
  await s.take('f')
  t.equal(await r.get(`${keyPrefix}:f`), '1')
  for (let i = 0; i < 50; i++) {
    s.give('f')
    await s.take('f')
  }
  t.equal(await r.get(`${keyPrefix}:f`), '1', 'still one slot held in Redis after 50 answers and re-polls')
  s.give('f')
  await until(async () => (await r.get(`${keyPrefix}:f`)) === '0', 5000, 'given back to Redis once parked long enough')
})

t.test('a refusal names when the window ends; give-backs never count below zero', async (t) => {
  const keyPrefix = prefix()
  const r = await redis(t)
  const s = new SlotLimiter({ keyPrefix, points: 1, duration: 30 }, r)
  t.equal(await outcome(s.take('k')), 'ok')
  const refused = await s.take('k').catch((e: unknown) => e)
  t.ok(refused instanceof WireError && refused.code === 'rate_limited', "the refusal is the client's 429 rate_limited")
  const resetMs = (refused as WireError).details?.resetMs as number
  t.ok(resetMs > 0 && resetMs <= 30_000, 'resetMs is the window left')
  t.equal((refused as WireError).retryAfter, resetMs / 1000, 'and Retry-After says the same')
  t.equal(await r.get(`${keyPrefix}:k`), '1', "the count in rate-limiter-flexible's key")
  t.ok((await r.pttl(`${keyPrefix}:k`)) > 0, 'which expires with its window')
  s.give('k')
  s.give('k') // one more than was taken
  await until(async () => (await r.get(`${keyPrefix}:k`)) === '0', 5000, 'both given back to Redis')
  t.same(await Promise.all([s.take('k'), s.take('k')].map(outcome)), ['ok', 'refused'], 'the count stopped at zero: still one slot')
})

t.test('without Redis ready, each process counts in memory (fail to local, not open)', async (t) => {
  const r = new Redis(TEST_REDIS_URL, { lazyConnect: true })
  t.teardown(() => r.disconnect())
  const s = new SlotLimiter({ keyPrefix: prefix(), points: 2, duration: 60 }, r)
  t.same(await Promise.all([s.take('k'), s.take('k'), s.take('k')].map(outcome)), ['ok', 'ok', 'refused'])
  s.give('k')
  t.equal(await outcome(s.take('k')), 'ok', 'a give-back counts in memory too')
})

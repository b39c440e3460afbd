import { Redis } from 'ioredis'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { WireError } from '../../libs/shared/domain/index.js'
import t, { type Test } from 'tap'
import { loadConfig } from '../../libs/shared/config/index.js'
import { clientLimits, WindowLimiter } from '../../libs/shared/limits/index.js'
import { TEST_REDIS_URL } from '../helpers/services.js'

// The batched, leased Redis limiter of the hot paths (publishes, reads): shared by every process on
// one Redis, never more than the limit in all, and counting in the same keys as rate-limiter-flexible.

const prefix = () => `test:wl:${process.pid}:${Math.random().toString(36).slice(2, 8)}`
const ready = async (r: Redis) => (r.status === 'ready' ? undefined : new Promise((res) => r.once('ready', res)))

async function redis(t: Test) {
  const r = new Redis(TEST_REDIS_URL, { enableAutoPipelining: true })
  t.teardown(() => r.disconnect())
  await ready(r)
  return r
}

/** Consumes `n` times, spread over `limiters` in turn, all at once; how many each granted. */
async function burst(limiters: WindowLimiter[], key: string, n: number) {
  const out = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      limiters[i % limiters.length]!.consume(key).then(
        () => 'ok',
        (e: unknown) => (e instanceof WireError && e.code === 'rate_limited' ? 'limited' : 'error'),
      ),
    ),
  )
  return {
    ok: out.filter((o) => o === 'ok').length,
    limited: out.filter((o) => o === 'limited').length,
    errors: out.filter((o) => o === 'error').length,
  }
}

t.test('two processes share one limit: a burst over both is granted exactly the limit', async (t) => {
  const p = prefix()
  const a = new WindowLimiter({ keyPrefix: p, points: 5, duration: 60 }, await redis(t))
  const b = new WindowLimiter({ keyPrefix: p, points: 5, duration: 60 }, await redis(t))
  t.same(await burst([a, b], 'id-1', 12), { ok: 5, limited: 7, errors: 0 })
  t.same(await burst([b], 'id-1', 1), { ok: 0, limited: 1, errors: 0 }, 'and the other refuses too')
  t.same(await burst([a], 'id-2', 1), { ok: 1, limited: 0, errors: 0 }, 'another key has its own')
})

t.test('one at a time across processes, as a slow client publishes', async (t) => {
  const p = prefix()
  const a = new WindowLimiter({ keyPrefix: p, points: 3, duration: 60 }, await redis(t))
  const b = new WindowLimiter({ keyPrefix: p, points: 3, duration: 60 }, await redis(t))
  const seen: string[] = []
  for (let i = 0; i < 5; i++)
    seen.push(
      await (i % 2 ? b : a).consume('k').then(
        () => 'ok',
        () => 'limited',
      ),
    )
  t.same(seen, ['ok', 'ok', 'ok', 'limited', 'limited'])
})

t.test('a refusal says how long until the window turns', async (t) => {
  const a = new WindowLimiter({ keyPrefix: prefix(), points: 1, duration: 30 }, await redis(t))
  await a.consume('k')
  const res = await a.consume('k').then(
    () => null,
    (e: unknown) => e,
  )
  t.ok(res instanceof WireError && res.code === 'rate_limited', "the refusal is the client's 429 rate_limited")
  t.equal((res as WireError).details?.remaining, 0)
  const resetMs = (res as WireError).details?.resetMs as number
  t.ok(resetMs > 0 && resetMs <= 30_000)
})

t.test('a busy key leases points ahead: fewer Redis calls, and still never more than the limit in all', async (t) => {
  const p = prefix()
  const points = 2000
  const ra = await redis(t)
  const a = new WindowLimiter({ keyPrefix: p, points, duration: 60 }, ra)
  const b = new WindowLimiter({ keyPrefix: p, points, duration: 60 }, await redis(t))
  let calls = 0
  const evalOf = ra.eval.bind(ra)
  ra.eval = ((...args: Parameters<typeof ra.eval>) => (calls++, evalOf(...args))) as typeof ra.eval
  let granted = 0
  // one consume per turn, as a steady publisher: each would cost a call without leases
  for (let i = 0; i < 300; i++) granted += (await burst([a], 'busy', 1)).ok
  t.equal(granted, 300)
  t.ok(calls < 30, `300 consumes cost ${calls} Redis calls`)
  const rest = await burst([a, b], 'busy', 3000)
  t.ok(granted + rest.ok <= points, `granted ${granted + rest.ok} of ${points}`)
  // what a process may hold unused is at most its lease: points / 16, at most 64
  t.ok(granted + rest.ok >= points - 2 * 64, 'and at most a lease per process is left unspent')
})

t.test('counts in the same keys as rate-limiter-flexible: a process running either shares the count', async (t) => {
  const p = prefix()
  const r = await redis(t)
  const old = new RateLimiterRedis({ storeClient: r, keyPrefix: p, points: 4, duration: 60 })
  const ours = new WindowLimiter({ keyPrefix: p, points: 4, duration: 60 }, r)
  await old.consume('k')
  await old.consume('k')
  t.same(await burst([ours], 'k', 3), { ok: 2, limited: 1, errors: 0 })
  await t.rejects(old.consume('k'), 'the old limiter sees our points')
})

t.test('while Redis is not ready, each process counts on its own (fail to local, not open)', async (t) => {
  const r = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null })
  r.on('error', () => {})
  t.teardown(() => r.disconnect())
  const a = new WindowLimiter({ keyPrefix: prefix(), points: 2, duration: 60 }, r)
  t.same(await burst([a], 'k', 4), { ok: 2, limited: 2, errors: 0 })
})

t.test('a Redis call that fails falls back to counting in memory', async (t) => {
  const r = await redis(t)
  const p = prefix()
  const a = new WindowLimiter({ keyPrefix: p, points: 2, duration: 60 }, r)
  await r.lpush(`${p}:k`, 'not a counter') // the script's INCRBY fails on it (WRONGTYPE)
  t.same(await burst([a], 'k', 3), { ok: 2, limited: 1, errors: 0 })
  await r.del(`${p}:k`)
})

t.test('as many followers as a process may hold, polling in turn, keep their leases', async (t) => {
  // Followers poll one after another, round after round: with fewer leases kept than followers, each
  // poll would push out the lease the next follower is about to use, and every poll would go to Redis.
  const cfg = loadConfig({})
  const followers = cfg.http.maxConnections // the most one process serves at once (HTTP_MAX_CONNECTIONS)
  const limits = clientLimits({ ...cfg.clientLimits, keyPrefix: prefix() }, await redis(t))
  const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
  let fromLease = 0
  // leases double as a key keeps using them (1, 2, 4 points): round 7 is served from the third
  for (let round = 1; round <= 7; round++) {
    let settled = 0
    const polls = Array.from({ length: followers }, (_, i) => limits.read(address(i)).then(() => void settled++))
    // a consume that goes to Redis waits for a script call sent in the check phase and its reply: one
    // turn of the event loop later, only what a lease served has settled
    await new Promise((r) => setImmediate(r))
    fromLease = settled
    await Promise.all(polls)
  }
  t.equal(fromLease, followers, `all ${followers} polls of the seventh round served from leases, none waiting on Redis`)
})

t.test('a key holding a newline cannot split a batch: the keys beside it keep their own counts, in Redis', async (t) => {
  const p = prefix()
  const r = await redis(t)
  const a = new WindowLimiter({ keyPrefix: p, points: 2, duration: 60 }, r)
  // in one batch: a key with a newline (no client address or identity id holds one) between two others
  const out = await Promise.all(
    ['left', 'x\nright', 'right', 'x\nright', 'x\nright'].map((k) =>
      a.consume(k).then(
        () => 'ok',
        () => 'limited',
      ),
    ),
  )
  t.same(out, ['ok', 'ok', 'ok', 'ok', 'limited'], 'the newline key has its own budget of 2')
  // counted in Redis (shared with every process), each under its own key: neither "x" nor "right"
  // is charged for it (split at its newline, it charged "x" 3 points and broke the batch's script)
  t.same([await r.get(`${p}:left`), await r.get(`${p}:right`), await r.get(`${p}:x`)], ['1', '1', null])
  t.equal((await r.keys(`${p}:*`)).length, 3, 'three keys: left, right and the newline key, under its hash')
})

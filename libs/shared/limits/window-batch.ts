import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { RateLimiterMemory, RateLimiterRes } from './rate-limiter.js'
import { KeyBatch, refusalOf, type BudgetOptions } from './budget.js'
import { settleFrom, type BudgetWaiter } from './budget-waiter.js'
import { keyLine, redisScript, type ScriptCall } from './redis-script.js'

/**
 * Reserves points for each key in one script call: for each key the same steps as
 * rate-limiter-flexible's RateLimiterRedis (a fixed window created with its expiry, counted with
 * INCRBY), so keys, windows and counts are the same as its and processes running either share them.
 * ARGV: window seconds, key prefix, the keys' suffixes each ended by a newline, the points asked per
 * key separated by spaces. Returns per key: consumed, ttl ms.
 * @NOTE the keys go as two strings, not one argument each (KEYS): a call of 500 keys then costs the
 * process a few strings, not thousands of arguments held across the round trip. Wire's Redis is one
 * node (the batch's keys are in many hash slots already).
 */
const SCRIPT = `local out = {}
local points = string.gmatch(ARGV[4], '%d+')
for suffix in string.gmatch(ARGV[3], '([^\\n]*)\\n') do
  local key = ARGV[2] .. suffix
  redis.call('set', key, 0, 'EX', ARGV[1], 'NX')
  local consumed = redis.call('incrby', key, points())
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, ARGV[1])
    ttl = 1000 * ARGV[1]
  end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
end
return out`

/** Most points a process reserves ahead for one key (see LEASE_SHARE). */
const MAX_LEASE = 64
/** A lease is at most this fraction of a window's points, so what other processes may be refused early stays small. */
const LEASE_SHARE = 16
/**
 * Keys holding a lease, unless the limiter is given its own bound; least recently used are dropped
 * (their unused points are forfeited, never overspent).
 */
const MAX_LEASES = 10_000

interface Lease {
  /** Points reserved in Redis and not handed out yet. */
  left: number
  /** Size of the next reservation: doubles while the key keeps using up its lease within the window. */
  size: number
  /** The window's end (its key's expiry in Redis); a lease dies with it. */
  until: number
}

export interface WindowLimiterOptions extends BudgetOptions {
  /**
   * Keys holding a lease at once (default MAX_LEASES). Keep it above the keys that consume steadily
   * (a reader's followers): keys used in turn, one more than the bound, would each find its lease
   * dropped and go to Redis on every consume.
   */
  maxLeases?: number
}

/**
 * A fixed-window limiter shared through Redis whose hot path stays in the process. Every point
 * handed out was first counted in Redis, so all processes together never admit more than the
 * limit. A key consuming steadily reserves a few points ahead (a lease that doubles up to
 * min(MAX_LEASE, points / LEASE_SHARE) and dies with the window), so a busy identity costs one
 * Redis call per lease rather than per publish; a key seen rarely reserves exactly what it asks
 * for. The consumes of a millisecond (BATCH_MS) go to Redis in one script call. The cost: a
 * process may hold up to a lease of unused points per key, which other processes cannot spend in
 * that window. While Redis is not ready, or a call fails, each process counts in memory (fail to
 * local, not open), as rate-limiter-flexible's insurance limiter does.
 */
export class WindowLimiter {
  readonly points: number
  readonly duration: number
  private readonly prefix: string
  private readonly maxLease: number
  private readonly memory: RateLimiterMemory
  private readonly redis: Redis | undefined
  private readonly script: ScriptCall | undefined
  private readonly leases: LRUCache<string, Lease>
  private readonly batch: KeyBatch<BudgetWaiter[]>
  private readonly o: WindowLimiterOptions

  constructor(o: WindowLimiterOptions, redis?: Redis) {
    this.o = o
    this.points = o.points
    this.duration = o.duration
    this.prefix = o.keyPrefix
    this.maxLease = Math.min(MAX_LEASE, Math.max(1, Math.floor(o.points / LEASE_SHARE)))
    this.leases = new LRUCache<string, Lease>({ max: o.maxLeases ?? MAX_LEASES })
    this.redis = redis
    this.script = redis && redisScript(redis, 'wireWindow', SCRIPT)
    this.memory = new RateLimiterMemory({ keyPrefix: o.keyPrefix, points: o.points, duration: o.duration })
    this.batch = new KeyBatch<BudgetWaiter[]>(
      () => [],
      (b) => this.reserve(b),
    )
  }

  /** Takes one point of `key`'s window: resolves when granted, rejects with the budget's WireError (429 rate_limited) past the limit. */
  consume(key: string): Promise<unknown> {
    if (this.redis?.status !== 'ready') return this.inMemory(key)
    if (this.leased(key)) return Promise.resolve()
    return new Promise<void>((resolve, reject) => this.batch.ask(key).push({ resolve, reject }))
  }

  /**
   * `consume` for a caller that is its own callback, with no promise: `w.resolve()` when granted
   * (at once when the key's lease has points left), `w.reject(res)` past the limit.
   */
  consumeTo(key: string, w: BudgetWaiter): void {
    if (this.redis?.status !== 'ready') return void settleFrom(this.inMemory(key), w)
    if (this.leased(key)) return void w.resolve()
    this.batch.ask(key).push(w)
  }

  /** The in-memory count (no Redis, or Redis failing): fail to local, not open. */
  private inMemory(key: string): Promise<unknown> {
    return this.memory.consume(key).catch((res: unknown) => {
      throw refusalOf(this.o, res)
    })
  }

  /** Takes a point from the key's lease when it has one left in this window (and no one waits before). */
  private leased(key: string): boolean {
    const lease = this.leases.get(key)
    if (!lease || lease.left <= 0 || lease.until <= Date.now() || this.batch.has(key)) return false
    lease.left--
    return true
  }

  private async reserve(batch: Array<[string, BudgetWaiter[]]>) {
    const now = Date.now()
    const asks = batch.map(([key, waiting]) => {
      const prev = this.leases.get(key)
      // a lease used up within its window: reserve twice as many next time
      const size = prev && prev.until > now ? Math.min(this.maxLease, prev.size * 2) : 1
      return { key, waiting, size, reserve: Math.max(waiting.length, size) }
    })
    let out: number[]
    try {
      let keys = ''
      let points = ''
      for (const a of asks) (keys += keyLine(a.key)), (points += `${a.reserve} `)
      out = (await this.script!(0, String(this.duration), `${this.prefix}:`, keys, points)) as number[]
    } catch {
      for (const a of asks) for (const w of a.waiting) settleFrom(this.inMemory(a.key), w)
      return
    }
    const at = Date.now()
    asks.forEach((a, i) => {
      const consumed = Number(out[2 * i])
      const ttl = Number(out[2 * i + 1])
      // of the points just reserved, those still under the limit are granted, in arrival order
      const granted = Math.max(0, Math.min(a.reserve, this.points - (consumed - a.reserve)))
      a.waiting.forEach((p, j) => {
        if (j < granted) p.resolve()
        else p.reject(refusalOf(this.o, new RateLimiterRes(0, ttl, consumed, false)))
      })
      if (granted > 0) this.leases.set(a.key, { left: Math.max(0, granted - a.waiting.length), size: a.size, until: at + ttl })
    })
  }
}

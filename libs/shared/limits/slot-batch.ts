import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRes } from './rate-limiter.js'
import { KeyBatch, refusalOf, type BudgetOptions } from './budget.js'
import { settleFrom, type BudgetWaiter } from './budget-waiter.js'
import { keyLine, redisScript, type ScriptCall } from './redis-script.js'

/**
 * For each key, in one script call: give back the slots released since the last call, then take
 * what is asked for up to the limit. The key is rate-limiter-flexible's (a counter created with
 * its window's expiry), so a leaked slot comes back when the window ends, as with its limiter.
 * ARGV: window seconds, limit, key prefix, the keys' suffixes each ended by a newline, then per key
 * "released asked" separated by spaces. Returns per key: granted, ttl ms. The keys go as one string
 * rather than one argument each, as in window-batch.ts.
 */
const SCRIPT = `local out = {}
local limit = tonumber(ARGV[2])
local counts = string.gmatch(ARGV[5], '%d+')
for suffix in string.gmatch(ARGV[4], '([^\\n]*)\\n') do
  local key = ARGV[3] .. suffix
  local released = tonumber(counts())
  local asked = tonumber(counts())
  redis.call('set', key, 0, 'EX', ARGV[1], 'NX')
  local held = tonumber(redis.call('get', key))
  if released > 0 then
    held = math.max(0, held - released)
    redis.call('set', key, held, 'KEEPTTL')
  end
  local granted = math.max(0, math.min(asked, limit - held))
  if granted > 0 then redis.call('incrby', key, granted) end
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, ARGV[1])
    ttl = 1000 * ARGV[1]
  end
  out[#out + 1] = granted
  out[#out + 1] = ttl
end
return out`

/** A slot given back stays with this process this long for its key's next take (a follower re-polls at once). */
const PARK_MS = 1000
/** Keys with parked slots at most; past it a give-back goes to Redis at once. */
const MAX_PARKED = 100_000
const GRANTED = Promise.resolve()

interface Ask {
  released: number
  waiting: BudgetWaiter[]
}

/** `points`: slots one key may hold at once; `duration`: a key's counter expires this long (seconds) after it was created, so leaked slots come back then. */
export type SlotLimiterOptions = BudgetOptions

/**
 * Slots held while something lasts (a waiting long-poll per client address), shared through
 * Redis. Takes and gives back of a millisecond (BATCH_MS) go to Redis in one script call,
 * rather than a round trip each. A slot given back is first parked in the process for PARK_MS: a
 * follower answered by a fan-out polls again within milliseconds, and its take reuses the parked
 * slot without Redis. Parked slots still count in Redis, so all processes together never hold more
 * than the limit; an address may just find its slot held by a process for up to PARK_MS after its
 * poll ended. While Redis is not ready, or a call fails, each process counts in memory (fail to
 * local, not open).
 */
export class SlotLimiter {
  readonly points: number
  private readonly o: SlotLimiterOptions
  private readonly memory: RateLimiterMemory
  private readonly redis: Redis | undefined
  private readonly script: ScriptCall | undefined
  private readonly batch: KeyBatch<Ask>
  /**
   * Slots this process holds in Redis for no poll, by key: the key's next take uses one. A key whose
   * slots are all taken again keeps its entry (n = 0) until unpark: a follower gives its slot back
   * and takes it again on every answer, and an entry made and dropped each time (with the map's
   * table grown and shrunk under it) was what a scavenge promoted most with the budgets on.
   */
  private readonly parked = new Map<string, { n: number; at: number }>()
  private parkTimer: NodeJS.Timeout | undefined

  constructor(o: SlotLimiterOptions, redis?: Redis) {
    this.o = o
    this.points = o.points
    this.redis = redis
    this.script = redis && redisScript(redis, 'wireSlots', SCRIPT)
    this.memory = new RateLimiterMemory({ keyPrefix: o.keyPrefix, points: o.points, duration: o.duration })
    this.batch = new KeyBatch<Ask>(
      () => ({ released: 0, waiting: [] }),
      (b) => this.send(b),
    )
  }

  /** Takes a slot of `key`: resolves when granted, rejects with the budget's WireError (429 rate_limited) when all are held. */
  take(key: string): Promise<void> {
    if (this.redis?.status !== 'ready') return this.takeInMemory(key)
    const p = this.parked.get(key)
    if (p && p.n > 0) return (p.n--, GRANTED)
    return new Promise<void>((resolve, reject) => this.batch.ask(key).waiting.push({ resolve, reject }))
  }

  /**
   * `take` for a caller that is its own callback, with no promise: `w.resolve()` when granted (at
   * once when the key has a parked slot), `w.reject(err)` with the budget's WireError when all are held.
   */
  takeTo(key: string, w: BudgetWaiter): void {
    if (this.redis?.status !== 'ready') return void settleFrom(this.takeInMemory(key), w)
    const p = this.parked.get(key)
    if (!p || p.n === 0) return void this.batch.ask(key).waiting.push(w)
    p.n--
    w.resolve()
  }

  /** Gives back a slot `take` granted. */
  give(key: string) {
    if (this.redis?.status !== 'ready') return void this.memory.reward(key, 1).catch(() => {})
    const p = this.parked.get(key)
    if (p) (p.n += 1), (p.at = Date.now())
    else if (this.parked.size < MAX_PARKED) this.parked.set(key, { n: 1, at: Date.now() })
    else return void this.batch.ask(key).released++
    this.parkTimer ??= setInterval(() => this.unpark(), PARK_MS / 2).unref()
  }

  /** Gives Redis back the slots parked longer than PARK_MS; forgets the keys whose last give-back is that old. */
  private unpark() {
    const cutoff = Date.now() - PARK_MS
    for (const [key, p] of this.parked)
      if (p.at <= cutoff) {
        this.parked.delete(key)
        if (p.n > 0) this.batch.ask(key).released += p.n
      }
    if (!this.parked.size) clearInterval(this.parkTimer), (this.parkTimer = undefined)
  }

  private takeInMemory(key: string): Promise<void> {
    return this.memory.consume(key).then(
      () => {},
      (res: unknown) => {
        this.memory.reward(key, 1).catch(() => {}) // a refused take holds nothing: undo what it counted
        throw refusalOf(this.o, res)
      },
    )
  }

  private async send(batch: Array<[string, Ask]>) {
    let out: number[]
    try {
      let keys = ''
      let counts = ''
      for (const [k, a] of batch) (keys += keyLine(k)), (counts += `${a.released} ${a.waiting.length} `)
      out = (await this.script!(0, String(this.o.duration), String(this.points), `${this.o.keyPrefix}:`, keys, counts)) as number[]
    } catch {
      // a lost give-back only holds its slot until the window ends; takes are counted in memory
      for (const [key, a] of batch) for (const w of a.waiting) settleFrom(this.takeInMemory(key), w)
      return
    }
    batch.forEach(([, a], i) => {
      const granted = Number(out[2 * i])
      const ttl = Number(out[2 * i + 1])
      a.waiting.forEach(
        (p, j) => void (j < granted ? p.resolve() : p.reject(refusalOf(this.o, new RateLimiterRes(0, ttl, this.points, false)))),
      )
    })
  }
}

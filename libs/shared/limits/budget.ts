import { WireError } from '../domain/index.js'
import { metrics } from '../metrics/index.js'
import { RateLimiterRes } from './rate-limiter.js'

/** What every budget is told: where its counts live, its limit and window, and how its refusal reads. */
export interface BudgetOptions {
  keyPrefix: string
  points: number
  /** Window length in seconds. */
  duration: number
  /** The limit in words, for the refusal ("3000 requests per 60 s from one address"); default "<points> per <duration> s". */
  what?: string
  /** The refusal's label on `wire_refused_total` (reads, long_polls, publishes, …); unset: not counted there. */
  reason?: string
}

/** The one refusal every budget gives: 429 `rate_limited`, its limit and when it resets, and Retry-After. */
export function limited(
  limit: number,
  what: string,
  res: { remainingPoints?: number; msBeforeNext?: number } | null,
  resetMs = res?.msBeforeNext ?? 1000,
): WireError {
  return new WireError(
    'rate_limited',
    `rate limit reached: ${what}`,
    { limit, remaining: Math.max(0, res?.remainingPoints ?? 0), resetMs },
    { retryAfter: resetMs / 1000 },
  )
}

/**
 * A budget's refusal as the client hears it: a limiter's answer (rate-limiter-flexible's
 * RateLimiterRes, from Redis or the in-memory fallback) becomes the WireError, counted; any other
 * failure passes as it is. Only the limiters of this folder call it, so no caller ever sees a RateLimiterRes.
 */
export function refusalOf(o: BudgetOptions, res: unknown): unknown {
  if (!(res instanceof RateLimiterRes)) return res
  if (o.reason) metrics.refused.inc({ reason: o.reason })
  return limited(o.points, o.what ?? `${o.points} per ${o.duration} s`, res)
}

/** Keys per script call: bounds one call's time inside Redis; more go in the next. */
const MAX_KEYS = 500
/**
 * While this many calls are out, what arrives waits for one to come back and then goes in one call:
 * under a burst (10,000 followers connecting) a call carries hundreds of keys rather than one or
 * two, and what each call costs the process (ioredis's command, pipeline, promises and written text,
 * all alive across the round trip, so promoted to V8's old generation) is paid once per batch.
 */
const MAX_IN_FLIGHT = 1
/**
 * What arrives is gathered this long (ms) before a call, rather than to the end of the event-loop
 * turn: connections arriving over many turns go in one call. Only a take that the process cannot
 * answer itself (a new address, a lease used up, no parked slot) waits for it, one round trip and
 * at most this much more.
 */
const BATCH_MS = 1

/**
 * The one Redis batcher of the budgets: what each key asks within BATCH_MS gathers in one entry
 * (`ask(key)`), and the entries go to Redis in calls of at most MAX_KEYS keys, one call out at a
 * time; `send` makes the call and answers the entries' waiters.
 */
export class KeyBatch<A> {
  private asks = new Map<string, A>()
  private scheduled = false
  /** Calls sent and not answered yet. */
  private inFlight = 0
  private readonly fresh: () => A
  private readonly send: (batch: Array<[string, A]>) => Promise<void>

  constructor(fresh: () => A, send: (batch: Array<[string, A]>) => Promise<void>) {
    this.fresh = fresh
    this.send = send
  }

  /** The entry `key` adds to in the next call (made on first use). */
  ask(key: string): A {
    let a = this.asks.get(key)
    if (!a) this.asks.set(key, (a = this.fresh()))
    this.schedule()
    return a
  }

  /** Whether `key` has an entry waiting for the next call. */
  has(key: string): boolean {
    return this.asks.has(key)
  }

  /** Sends what waits in BATCH_MS, unless a call is out: its answer sends it then. */
  private schedule() {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT) return
    this.scheduled = true
    setTimeout(() => this.flush(), BATCH_MS)
  }

  private flush() {
    this.scheduled = false
    const all = [...this.asks]
    this.asks = new Map()
    for (let i = 0; i < all.length; i += MAX_KEYS) {
      this.inFlight++
      void this.send(all.slice(i, i + MAX_KEYS)).finally(() => {
        this.inFlight--
        if (this.asks.size) this.schedule()
      })
    }
  }
}

import { WireError, type ReadQuery } from '../domain/index.js'
import { metrics } from '../metrics/index.js'
import type { FeedPage } from './page.js'

/** How a wait ended: woken with a page, or at `cursor` (deadline, disconnect, shutdown) with the caller to answer. */
export type WaitOutcome = { page: FeedPage } | { cursor: number }

/** Looks for matches after `cursor`: a page with signals ends the wait; an empty one moves the cursor on. */
export type Check = (q: ReadQuery, cursor: number) => FeedPage | Promise<FeedPage>

interface Waiter {
  readonly q: ReadQuery
  /** Waiters with the same key and cursor get the same page: it is computed and encoded once. */
  readonly key: string
  /** Everything up to here was considered and did not match. */
  cursor: number
  end(outcome: WaitOutcome): void
}

const YIELD_EVERY = 500
/** Retry-After of a long-poll refused because the process is full: its waiters turn over within a wait. */
const FULL_RETRY_AFTER_SECONDS = 2

/**
 * Long-poll requests waiting for a matching signal. Idle waiters cost a timer and no database
 * work. The waiters know nothing of the tail or the database: `wake` is handed the check to run.
 */
export class Waiters {
  private readonly all = new Set<Waiter>()
  /** At most this many wait at once (READER_MAX_WAITERS; 0: no cap). */
  private readonly max: number

  constructor(max = 0) {
    this.max = max
  }

  get size() {
    return this.all.size
  }

  /**
   * Waits at `cursor` until a wake finds a match, `waitMs` passes, `signal` aborts or `releaseAll`.
   * Throws `unavailable` (with Retry-After) at once when the process already holds `max` waits.
   */
  add(q: ReadQuery, cursor: number, waitMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (this.max > 0 && this.all.size >= this.max) {
      metrics.waitersRefused.inc()
      throw new WireError('unavailable', 'too many long-polls are waiting on this server; try again shortly', undefined, {
        retryAfter: FULL_RETRY_AFTER_SECONDS,
        overload: true,
      })
    }
    return new Promise<WaitOutcome>((resolve) => {
      const w: Waiter = {
        q,
        key: JSON.stringify([q.type, q.tags, q.origin, q.q, q.sinceMs, q.includeExpired, q.refId, q.limit]),
        cursor,
        end: (outcome) => {
          if (!this.all.delete(w)) return
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          metrics.waiting.dec()
          resolve(outcome)
        },
      }
      const onAbort = () => w.end({ cursor: w.cursor })
      const timer = setTimeout(onAbort, waitMs)
      this.all.add(w)
      metrics.waiting.inc()
      if (signal?.aborted) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /**
   * The tail moved: check each group of identical waiters (same filters, limit and cursor: the
   * common case of many followers of one feed) once, and answer all its members with that page.
   */
  async wake(check: Check) {
    const groups = new Map<string, Waiter[]>()
    for (const w of this.all) {
      const k = `${w.cursor}|${w.key}`
      const g = groups.get(k)
      if (g) g.push(w)
      else groups.set(k, [w])
    }
    let n = 0
    const endTimer = metrics.wakeToResponse.startTimer()
    const fanOut = metrics.fanOutSeconds.startTimer()
    for (const group of groups.values()) {
      const first = group[0]!
      let page: FeedPage
      try {
        page = await check(first.q, first.cursor)
      } catch {
        continue // they keep waiting: the next wake-up or their deadline answers them
      }
      for (const w of group) {
        if (page.signals.length || page.partial) (w.end({ page }), endTimer())
        else w.cursor = Math.max(w.cursor, page.nextCursor)
        if (++n % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r))
      }
    }
    if (n) fanOut()
  }

  /** Ends every wait now (shutdown); each caller answers from its cursor. */
  releaseAll() {
    for (const w of [...this.all]) w.end({ cursor: w.cursor })
  }
}

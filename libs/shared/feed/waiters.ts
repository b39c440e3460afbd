import type { ReadQuery } from '../domain/index.js'
import { metrics } from '../metrics/index.js'
import type { PageOut } from './feed.js'

export interface Waiter {
  readonly q: ReadQuery
  /** Waiters with the same key and cursor get the same page: it is computed and encoded once. */
  readonly key: string
  /** Everything up to here was considered and did not match. */
  cursor: number
  finish(page: PageOut): void
}

const YIELD_EVERY = 500

/**
 * Long-poll requests waiting for a matching signal. Idle waiters cost a timer and no database
 * work; when the tail moves, each is checked in memory (yielding to the event loop every few
 * hundred so 20,000 waiters do not stall it).
 */
export class Waiters {
  private readonly all = new Set<Waiter>()
  private readonly settle: (w: Waiter) => Promise<PageOut | null>
  private readonly atDeadline: (w: Waiter) => Promise<PageOut>
  constructor(settle: (w: Waiter) => Promise<PageOut | null>, atDeadline: (w: Waiter) => Promise<PageOut>) {
    this.settle = settle
    this.atDeadline = atDeadline
  }

  get size() {
    return this.all.size
  }

  /** Registers a waiter; `onGone` hooks the client's disconnect so a dropped request stops waiting at once. */
  add(q: ReadQuery, cursor: number, waitMs: number, onGone: (cb: () => void) => void): Promise<PageOut> {
    return new Promise<PageOut>((resolve) => {
      let done = false
      const w: Waiter = {
        q,
        key: JSON.stringify([q.type, q.tags, q.origin, q.q, q.sinceMs, q.includeExpired, q.refId, q.limit]),
        cursor,
        finish: (page) => {
          if (done) return
          done = true
          clearTimeout(timer)
          this.all.delete(w)
          metrics.waiting.dec()
          resolve(page)
        },
      }
      const timer = setTimeout(() => {
        this.atDeadline(w).then(w.finish, () => w.finish({ jsons: [], nextCursor: w.cursor }))
      }, waitMs)
      this.all.add(w)
      metrics.waiting.inc()
      onGone(() => w.finish({ jsons: [], nextCursor: w.cursor }))
    })
  }

  /**
   * The tail moved: settle each group of identical waiters (same filters, limit and cursor — the
   * common case of many followers of one feed) once, and answer all its members with that page.
   */
  async wakeAll() {
    const groups = new Map<string, Waiter[]>()
    for (const w of this.all) {
      const k = `${w.cursor}|${w.key}`
      const g = groups.get(k)
      if (g) g.push(w)
      else groups.set(k, [w])
    }
    let n = 0
    const end = metrics.wakeToResponse.startTimer()
    const all = metrics.fanOutSeconds.startTimer()
    for (const group of groups.values()) {
      const first = group[0]!
      const page = await this.settle(first)
      for (const w of group) {
        if (page) (w.finish(page), end())
        else w.cursor = first.cursor // settle moved the first one's cursor past what did not match
        if (++n % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r))
      }
    }
    if (n) all()
  }

  /** Answers every waiter now (shutdown). */
  releaseAll(page: (w: Waiter) => PageOut) {
    for (const w of [...this.all]) w.finish(page(w))
  }
}

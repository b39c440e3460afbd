import type { ReadQuery } from '../domain/index.js'
import { metrics } from '../metrics/index.js'
import type { PageOut } from './feed.js'

export interface Waiter {
  readonly q: ReadQuery
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

  async wakeAll() {
    let n = 0
    const end = metrics.wakeToResponse.startTimer()
    for (const w of [...this.all]) {
      const page = await this.settle(w)
      if (page) (w.finish(page), end())
      if (++n % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r))
    }
  }

  /** Answers every waiter now (shutdown). */
  releaseAll(page: (w: Waiter) => PageOut) {
    for (const w of [...this.all]) w.finish(page(w))
  }
}

import type { Gone } from '../caller.js'
import { Deadlines, type Due } from '../deadlines.js'
import { WireError, type ReadQuery } from '../domain/index.js'
import { hotCounts, metrics } from '../metrics/index.js'
import { startSpan, tracing } from '../tracing/index.js'
import type { FeedPage } from './page.js'
import { keyOf } from './shared-pages.js'

/**
 * Who hears a read's answer. A waiting long-poll is held by this object (and its Waiter), not by
 * suspended async functions and their promises: thousands wait at once, and each frame costs.
 * `page` and `fail` are called once between them, and neither may throw.
 */
export interface PageSink {
  page(p: FeedPage): void
  fail(err: unknown): void
}

/** A wait that ended without a wake-up (deadline, disconnect, shutdown) at `cursor`: the owner answers `sink`. */
export type Ended = (q: ReadQuery, cursor: number, sink: PageSink) => void

/** Looks for matches after `cursor`: a page with signals ends the wait; an empty one moves the cursor on. */
export type Check = (q: ReadQuery, cursor: number) => FeedPage | Promise<FeedPage>

const YIELD_EVERY = 500
/** Retry-After of a long-poll refused because the process is full: its waiters turn over within a wait. */
const FULL_RETRY_AFTER_SECONDS = 2

/**
 * One waiting request: its deadline is a slot in the shared wheel, its disconnect a listener object,
 * and its place among the waiters two links of its own (no Set: its table was rebuilt as a wake-up
 * emptied it and the followers' next polls filled it, and what a scavenge found of it was promoted).
 */
class Waiter implements Due {
  readonly q: ReadQuery
  /** Everything up to here was considered and did not match. */
  cursor: number
  readonly owner: Waiters
  readonly gone: Gone | undefined
  readonly sink: PageSink
  dueBucket: number | undefined = undefined
  /** The owner's waiters in the order they began (null at either end); unlinked for good when the wait ends. */
  prev: Waiter | null = null
  next: Waiter | null = null
  waiting = true

  constructor(owner: Waiters, q: ReadQuery, cursor: number, gone: Gone | undefined, sink: PageSink) {
    this.owner = owner
    this.q = q
    this.cursor = cursor
    this.gone = gone
    this.sink = sink
  }
  /** The deadline. */
  expire() {
    this.owner.end(this)
  }
  /** The caller left. */
  handleEvent() {
    this.owner.end(this)
  }
}

/**
 * Long-poll requests waiting for a matching signal. Idle waiters cost a slot in one timer wheel and
 * no database work. The waiters know nothing of the tail or the database: `wake` is handed the check to run.
 */
export class Waiters {
  /** The waiting requests, oldest first (a wake-up answers them in that order). */
  private first: Waiter | null = null
  private last: Waiter | null = null
  private count = 0
  private readonly deadlines = new Deadlines<Waiter>()
  /** At most this many wait at once (READER_MAX_WAITERS; 0: no cap). */
  private readonly max: number
  private readonly ended: Ended

  /** `ended` answers a wait that ends without a wake-up, from its cursor. */
  constructor(ended: Ended, max = 0) {
    this.ended = ended
    this.max = max
    metrics.waitingMax.set(max)
  }

  get size() {
    return this.count
  }

  /**
   * Waits at `cursor` until a wake finds a match (`sink.page`), or `waitMs` passes, `gone` aborts or
   * `releaseAll` (the `ended` callback answers). `sink.fail` hears `unavailable` (with Retry-After)
   * at once when the process already holds `max` waits. Registers now, in this turn.
   */
  add(q: ReadQuery, cursor: number, waitMs: number, gone: Gone | undefined, sink: PageSink): void {
    if (this.max > 0 && this.count >= this.max) {
      metrics.waitersRefused.inc()
      const full = new WireError('unavailable', 'too many long-polls are waiting on this server; try again shortly', undefined, {
        retryAfter: FULL_RETRY_AFTER_SECONDS,
        overload: true,
      })
      return void sink.fail(full)
    }
    if (gone?.aborted) return void this.ended(q, cursor, sink)
    const w = new Waiter(this, q, cursor, gone, sink)
    w.prev = this.last
    if (this.last) this.last.next = w
    else this.first = w
    this.last = w
    this.count++
    this.deadlines.add(w, Date.now() + waitMs)
    gone?.addEventListener('abort', w)
    hotCounts.waiting++
  }

  /** Ends `w`'s wait (once): with `page` when woken, else answered from its cursor by `ended`. */
  end(w: Waiter, page?: FeedPage) {
    if (!w.waiting) return
    w.waiting = false
    if (w.prev) w.prev.next = w.next
    else this.first = w.next
    if (w.next) w.next.prev = w.prev
    else this.last = w.prev
    w.prev = w.next = null
    this.count--
    this.deadlines.cancel(w)
    w.gone?.removeEventListener('abort', w)
    hotCounts.waiting--
    if (page) w.sink.page(page)
    else this.ended(w.q, w.cursor, w.sink)
  }

  /**
   * The tail moved: check each group of identical waiters (same filters, limit and cursor: the
   * common case of many followers of one feed) once, and answer all its members with that page.
   */
  async wake(check: Check) {
    const groups = new Map<string, Map<number, Waiter[]>>()
    for (let w = this.first; w; w = w.next) {
      const k = keyOf(w.q)
      let byCursor = groups.get(k)
      if (!byCursor) groups.set(k, (byCursor = new Map()))
      const g = byCursor.get(w.cursor)
      if (g) g.push(w)
      else byCursor.set(w.cursor, [w])
    }
    let n = 0
    let answered = 0
    const span = tracing.on ? startSpan('wire.wake') : undefined
    const endTimer = metrics.wakeToResponse.startTimer()
    const fanOut = metrics.fanOutSeconds.startTimer()
    for (const byCursor of groups.values())
      for (const group of byCursor.values()) {
        const first = group[0]!
        let page: FeedPage
        try {
          page = await check(first.q, first.cursor)
        } catch {
          continue // they keep waiting: the next wake-up or their deadline answers them
        }
        const answers = page.signals.length > 0 || page.partial === true
        for (const w of group) {
          if (answers) {
            this.end(w, page)
            answered++
          } else w.cursor = Math.max(w.cursor, page.nextCursor)
          if (++n % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r))
        }
        if (answers) endTimer() // when the last of the group was answered
      }
    if (n) fanOut()
    if (span) {
      span.set('wire.wake.waiters', n)
      span.set('wire.wake.answered', answered)
      span.set('wire.wake.groups', groups.size)
      span.end()
    }
  }

  /** Ends every wait now (shutdown); each caller answers from its cursor. */
  releaseAll() {
    const all: Waiter[] = []
    for (let w = this.first; w; w = w.next) all.push(w)
    for (const w of all) this.end(w)
  }
}

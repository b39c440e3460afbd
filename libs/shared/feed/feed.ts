import type { Invalidation, WakeBus } from '../bus/index.js'
import type { SignalReader } from '../db/index.js'
import { matchesFilter, serializeSignal, type ReadFilter, type ReadQuery, type Signal } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { metrics } from '../metrics/index.js'
import { Tail } from './tail.js'
import { Waiters, type Waiter } from './waiters.js'

/** A page ready to send: the signals' JSON (serialised once) and the cursor to poll with next. */
export interface PageOut {
  jsons: string[]
  nextCursor: number
  /** The rendered response, cached by reads.ts pageBody() so a page shared by many waiters is encoded once. */
  body?: Buffer
}

export interface FeedOptions {
  authority: string
  tailSize: number
  fallbackPollMs: number
  /** SIGNAL_SWEEP_GRACE_SECONDS in ms: older expired signals count as swept. */
  graceMs: number
  /** Readers on a replica: answers a request the replica is still behind on after `lagWaitMs`. */
  primary?: SignalReader
  lagWaitMs?: number
}

const ALL: ReadFilter = { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: true, refId: null }
const PULL = 1000

/**
 * The reader's view of the feed (ARCHITECTURE.md "Reader"): an in-memory tail advanced by one
 * query per wake-up however many requests wait, long-poll waiters matched in memory, and a
 * fallback timer so a lost wake-up costs latency, never a signal.
 */
export class Feed {
  private readonly tail: Tail
  private readonly waiters: Waiters
  private knownHead = 0
  /** The board's change number (pins, unpins, removals) the tail reflects. */
  private changes = 0
  private pulling: Promise<void> | null = null
  private again = false
  private timer: NodeJS.Timeout | undefined
  private lagRetry: NodeJS.Timeout | undefined
  private caughtUp = new Set<() => void>()
  private closed = false

  private readonly reader: SignalReader
  private readonly bus: WakeBus
  private readonly log: Logger
  private readonly o: FeedOptions

  constructor(reader: SignalReader, bus: WakeBus, log: Logger, o: FeedOptions) {
    this.reader = reader
    this.bus = bus
    this.log = log
    this.o = o
    this.tail = new Tail(o.authority, o.tailSize)
    this.waiters = new Waiters(
      (w) => this.settle(w),
      (w) => this.atDeadline(w),
    )
  }

  async start() {
    const page = await this.reader.newest(this.o.tailSize, ALL, Date.now())
    this.tail.reset(page.signals, page.head, page.signals.length < this.o.tailSize)
    this.changes = page.changes
    this.knownHead = page.head
    this.bus.onWake((head) => {
      metrics.wakes.inc({ source: 'bus' })
      this.knownHead = Math.max(this.knownHead, head)
      if (head > this.tail.head) void this.pull()
    })
    this.bus.onResync(() => (metrics.wakes.inc({ source: 'resync' }), void this.pull()))
    this.bus.onInvalidation((m) => void this.invalidate(m))
    this.timer = setInterval(() => (metrics.wakes.inc({ source: 'timer' }), void this.pull()), this.o.fallbackPollMs)
    this.timer.unref()
  }

  /** The writer in the same process reports each commit directly (no bus round trip). */
  noteHead(head: number) {
    this.knownHead = Math.max(this.knownHead, head)
  }

  get head() {
    return this.tail.head
  }
  get waiting() {
    return this.waiters.size
  }

  /** GET /sw/signals: from the tail when it covers the cursor, else from the database; waits if empty and asked to. */
  async read(q: ReadQuery, onGone: (cb: () => void) => void): Promise<PageOut> {
    // read-your-writes: a head we were told about but have not loaded yet is loaded first (one
    // coalesced query); a replica still behind it gets a moment to replay
    if (this.lagging) await this.pull()
    const behind = this.lagging && !(await this.replayed(this.o.lagWaitMs ?? 500))
    const now = Date.now()
    // a cursor beyond any head this reader knows (another board, a reset database): back to the head at once
    if (q.cursor !== null && q.cursor > this.knownHead) return { jsons: [], nextCursor: this.tail.head }
    // wire_tail_reads_total: where this request's page comes from (newest() counts its own)
    if (q.cursor !== null) metrics.tailHits.inc({ from: this.tail.covers(q.cursor) && !(behind && this.o.primary) ? 'tail' : 'db' })
    let page: PageOut
    if (q.cursor === null) page = await this.newest(q, now)
    else if (behind && this.o.primary) page = await this.fromDb(q, q.cursor, now, this.o.primary) // never "nothing new" below a known head
    else if (this.tail.covers(q.cursor)) page = this.fromTail(q, q.cursor, now)
    else page = await this.fromDb(q, q.cursor, now)
    if (page.jsons.length || q.waitMs <= 0 || this.closed) return page
    return this.waiters.add(q, page.nextCursor, q.waitMs, onGone)
  }

  /** Answer every waiter now with what it has (shutdown), and stop the timer. */
  releaseAll() {
    this.closed = true
    clearInterval(this.timer)
    clearTimeout(this.lagRetry)
    this.waiters.releaseAll((w) => ({ jsons: [], nextCursor: this.restingCursor(w.cursor) }))
  }

  private async newest(q: ReadQuery, now: number): Promise<PageOut> {
    const jsons: string[] = []
    const e = this.tail.entries
    for (let i = e.length - 1; i >= 0 && jsons.length < q.limit; i--) if (matchesFilter(e[i]!.signal, q, now, this.o.graceMs)) jsons.push(e[i]!.json)
    if (jsons.length === q.limit || this.tail.from === 0) {
      metrics.tailHits.inc({ from: 'tail' })
      return { jsons: jsons.reverse(), nextCursor: this.tail.head }
    }
    metrics.tailHits.inc({ from: 'db' })
    metrics.feedQueries.inc({ kind: 'newest' })
    const page = await this.reader.newest(q.limit, q, now)
    return { jsons: page.signals.map((s) => this.json(s)), nextCursor: Math.max(page.head, 0) }
  }

  private fromTail(q: ReadQuery, cursor: number, now: number): PageOut {
    const e = this.tail.entries
    const jsons: string[] = []
    let last = cursor
    for (let i = this.tail.firstAfter(cursor); i < e.length && jsons.length < q.limit; i++)
      if (matchesFilter(e[i]!.signal, q, now, this.o.graceMs)) (jsons.push(e[i]!.json), (last = e[i]!.signal.seq))
    return { jsons, nextCursor: jsons.length === q.limit ? last : this.restingCursor(cursor) }
  }

  private async fromDb(q: ReadQuery, cursor: number, now: number, reader = this.reader): Promise<PageOut> {
    metrics.feedQueries.inc({ kind: reader === this.reader ? 'page' : 'primary' })
    const page = await reader.pageAfter(cursor, q.limit, q, now)
    const full = page.signals.length === q.limit
    return { jsons: page.signals.map((s) => this.json(s)), nextCursor: full ? page.signals.at(-1)!.seq : Math.max(cursor, page.head) }
  }

  /** Where a follower stands after seeing nothing more: everything up to the tail's head was considered. */
  private restingCursor(cursor: number) {
    return this.tail.covers(cursor) ? Math.max(cursor, this.tail.head) : cursor
  }

  /** A signal's JSON: the tail's cached copy when it has one. */
  serialize(s: Signal) {
    return this.json(s)
  }

  private json(s: Signal) {
    const hit = this.tail.entries[this.tail.firstAfter(s.seq - 1)]
    return hit && hit.signal.seq === s.seq ? hit.json : serializeSignal(s, this.o.authority)
  }

  private get lagging() {
    return this.knownHead > this.tail.head
  }

  /** Resolves true once the tail reaches the head we were told about, false after `ms`. */
  private replayed(ms: number): Promise<boolean> {
    if (!this.lagging) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer)
        this.caughtUp.delete(onCaughtUp)
        resolve(ok)
      }
      const onCaughtUp = () => done(true)
      const timer = setTimeout(() => done(false), ms)
      this.caughtUp.add(onCaughtUp)
    })
  }

  /** A long-poll's deadline: what it has, unless its replica is behind a head it could be told about. */
  private async atDeadline(w: Waiter): Promise<PageOut> {
    if (this.lagging && this.o.primary && !this.closed) return this.fromDb(w.q, w.cursor, Date.now(), this.o.primary)
    return { jsons: [], nextCursor: this.restingCursor(w.cursor) }
  }

  /** Called for a waiter when the tail moved: answer it if something now matches. */
  private async settle(w: Waiter): Promise<PageOut | null> {
    const now = Date.now()
    const page = this.tail.covers(w.cursor) ? this.fromTail(w.q, w.cursor, now) : await this.fromDb(w.q, w.cursor, now)
    if (page.jsons.length) return page
    w.cursor = page.nextCursor
    return null
  }

  /** One query for everything new, however many requests wait; bursts of wake-ups coalesce. */
  private pull(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.pulling) {
      this.again = true
      return this.pulling
    }
    this.pulling = (async () => {
      do {
        this.again = false
        try {
          const before = this.tail.head
          metrics.feedQueries.inc({ kind: 'pull' })
          const page = await this.reader.pageAfter(before, PULL, ALL, Date.now())
          const full = page.signals.length === PULL
          this.tail.append(page.signals, full ? page.signals.at(-1)!.seq : page.head)
          if (page.changes > this.changes) await this.applyChanges(page.changes)
          this.knownHead = Math.max(this.knownHead, this.tail.head)
          if (full) this.again = true
          metrics.tailSize.set(this.tail.entries.length)
          metrics.replicaLagSignals.set(Math.max(0, this.knownHead - this.tail.head))
          if (this.tail.head > before) await this.waiters.wakeAll()
        } catch (err) {
          this.log.warn({ err }, 'feed refresh failed; retrying on the next wake-up or timer')
        }
      } while (this.again && !this.closed)
      if (!this.lagging) for (const fn of [...this.caughtUp]) fn()
      // @NOTE a replica behind a head we were told about: look again shortly until it has replayed
      else if (!this.lagRetry && !this.closed)
        this.lagRetry = setTimeout(() => {
          this.lagRetry = undefined
          void this.pull()
        }, 25)
    })().finally(() => (this.pulling = null))
    return this.pulling
  }

  /** Pins, unpins and removals the tail has not seen, whether or not their bus message arrived. */
  private async applyChanges(upTo: number) {
    while (this.changes < upTo) {
      const batch = await this.reader.changesSince(this.changes)
      for (const c of batch) this.tail.update(c.id, c.signal)
      this.changes = batch.length ? batch.at(-1)!.changed : upTo
    }
  }

  /** A removal, pin or unpin: re-read that signal so the tail serves its current state. */
  async invalidate(m: Invalidation) {
    if (m.kind !== 'signal') return
    if (this.pulling) await this.pulling
    try {
      this.tail.update(m.id, await this.reader.byId(m.id))
    } catch (err) {
      this.log.warn({ err, id: m.id }, 'signal refresh failed')
    }
  }
}

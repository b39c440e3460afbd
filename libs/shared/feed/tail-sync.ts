import type { Invalidation, WakeBus } from '../bus/index.js'
import { isConnectionError, type SignalReader } from '../db/index.js'
import type { ReadFilter, Signal } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { metrics } from '../metrics/index.js'
import { coalesced } from './coalesced.js'
import { Tail } from './tail.js'

export interface TailSyncOptions {
  authority: string
  tailSize: number
  /** READER_TAIL_MAX_BYTES: the tail's bound in bytes (entryBytes), besides its `tailSize` entries. */
  tailMaxBytes?: number
  fallbackPollMs: number
  /** Readers on a replica: the primary, asked for the true head when a wake-up names one the replica has not replayed. */
  primary?: SignalReader
}

const EVERYTHING: ReadFilter = { type: null, tags: [], origin: null, q: null, sinceMs: null, includeExpired: true, refId: null }
const REFRESH_ROWS = 1000
const LAG_RETRY_MS = 25
/** At most one head query on the primary this often while the replica is behind. */
const HEAD_CHECK_MS = 250
/** A replica behind a head the primary confirms for this long: the tail reads from the primary until it has replayed. */
const LAG_PRIMARY_MS = 500

/**
 * Keeps the tail in step with the database: one query for everything new per wake-up however many
 * requests wait (bursts coalesce), a fallback timer so a lost wake-up costs latency and never a
 * signal, the change log for pins and removals, and the head the board is known to have reached.
 */
export class TailSync {
  readonly tail: Tail
  /** The highest head this process has reason to believe committed (wake-ups, its own commits, its reads). */
  #knownHead = 0
  private lastHeadCheck = 0
  /** The board's change number (pins, unpins, removals) the tail reflects. */
  private changes = 0
  /** Where seq last jumped after a failover (Page.epoch) when the tail was loaded. */
  private epoch = 0
  /** A pin, unpin or removal named a signal the tail may not hold yet: the next commit is read back, not taken as it is. */
  private changedAhead = false
  private refreshing: Promise<void> | null = null
  private refreshAgain = false
  private timer: NodeJS.Timeout | undefined
  private lagRetry: NodeJS.Timeout | undefined
  /** Since when the replica has not replayed `behindTarget`, a head known then (0: it is not behind). */
  private behindSince = 0
  private behindTarget = 0
  /** The head the database this process reads had replayed when last looked at (the tail may be ahead: taken from the primary). */
  private replayed = 0
  private lastReplayedLook = 0
  private readonly caughtUpListeners = new Set<() => void>()
  private closed = false
  private readonly reader: SignalReader
  private readonly bus: WakeBus
  private readonly log: Logger
  private readonly opts: TailSyncOptions
  /** After every move of the tail: the waiters' wake-up, one at a time (moves during one make one more). */
  private readonly advanced: () => Promise<void>

  constructor(reader: SignalReader, bus: WakeBus, log: Logger, opts: TailSyncOptions, onAdvance: () => Promise<void>) {
    this.reader = reader
    this.bus = bus
    this.log = log
    this.opts = opts
    this.advanced = coalesced(onAdvance, (err) => this.log.warn({ err }, 'waking the waiters failed'))
    this.tail = new Tail(opts.authority, opts.tailSize, opts.tailMaxBytes)
  }

  async start() {
    await this.load()
    this.#knownHead = this.tail.head
    this.bus.onWake((head, committed) => (metrics.wakes.inc({ source: 'bus' }), committed ? this.took(committed) : this.heard(head)))
    this.bus.onResync(() => (metrics.wakes.inc({ source: 'resync' }), void this.refresh()))
    this.bus.onInvalidation((m) => this.invalidate(m)) // awaited by this process's admin call: its answer already shows the change
    this.timer = setInterval(() => (metrics.wakes.inc({ source: 'timer' }), void this.refresh()), this.opts.fallbackPollMs)
    this.timer.unref()
  }

  /** The newest signals from the database, as the tail's whole content. */
  private async load() {
    const page = await this.reader.newest(this.opts.tailSize, EVERYTHING, Date.now())
    this.tail.reset(page.signals, page.head, page.from)
    this.replayed = page.head
    this.changes = page.changes
    this.epoch = page.epoch
  }

  /** A head someone committed (a wake-up, this process's own writer's first): load up to it. */
  heard(head: number) {
    if (head <= this.#knownHead) return
    this.#knownHead = head
    void this.refresh()
  }

  /**
   * Signals this process just committed, in seq order. When they continue the tail exactly (the
   * first is the head + 1: every seq below them is in the tail already; a seq between them that
   * a batch left unused, its Idempotency-Key already held, has no signal) they go in as they are,
   * with no query. Anything else (an earlier commit whose answer has not been handled
   * yet, another process's commit in between, a change to a signal not taken in yet) is read from
   * the database, like a head heard of.
   */
  took(batch: readonly Signal[]) {
    const head = batch.at(-1)!.seq
    if (this.closed || this.changedAhead || batch[0]!.seq !== this.tail.head + 1) return this.heard(head)
    this.tail.append(batch, head)
    this.#knownHead = Math.max(this.#knownHead, head)
    metrics.tailSize.set(this.tail.entries.length)
    void this.advanced()
  }

  get head() {
    return this.tail.head
  }
  /** The highest head this reader knows of; a cursor beyond it belongs to no feed it has seen. */
  /** Pins, unpins and removals applied so far (feed_head.changes). */
  get changesSeen() {
    return this.changes
  }

  /** The failover epoch the tail was loaded at (Page.epoch). */
  get epochSeen() {
    return this.epoch
  }

  get knownHead() {
    return this.#knownHead
  }
  /** The database this reader reads has not replayed a head it was told about. */
  get lagging() {
    return this.#knownHead > this.tail.head
  }

  /**
   * A cursor beyond the head this process knows of: true when the board really has reached it
   * (another reader served it before this one heard the wake-up: this process is merely behind, and
   * now knows it), false when no such head exists (another board's cursor, a reset database).
   */
  async reached(cursor: number): Promise<boolean> {
    if (cursor <= this.#knownHead) return true
    await this.refresh()
    if (cursor <= this.#knownHead) return true
    let truth: number
    try {
      truth = await (this.opts.primary ?? this.reader).head()
    } catch (err) {
      // the primary is unreachable (a failover under way): keep the follower where it is, waiting
      // above its cursor; nothing below it is skipped, and every seq handed out later lies above it
      if (this.opts.primary && isConnectionError(err)) return true
      throw err
    }
    if (truth < cursor) return false
    this.heard(truth)
    return true
  }

  /** Refreshes if lagging; true once the tail reaches the known head, false if still behind after `ms`. */
  async catchUp(ms: number): Promise<boolean> {
    if (!this.lagging) return true
    await this.refresh()
    if (!this.lagging) return true
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer)
        this.caughtUpListeners.delete(onCaughtUp)
        resolve(ok)
      }
      const onCaughtUp = () => done(true)
      const timer = setTimeout(() => done(false), ms)
      this.caughtUpListeners.add(onCaughtUp)
    })
  }

  /** One query for everything new, however many requests wait; wake-ups during it cause one more. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.refreshing) {
      this.refreshAgain = true
      return this.refreshing
    }
    this.refreshing = this.refreshLoop().finally(() => (this.refreshing = null))
    return this.refreshing
  }

  private async refreshLoop() {
    do {
      this.refreshAgain = false
      this.changedAhead = false // this query starts after the change: it sees it in the change log
      // @NOTE a replica that stopped replaying (its link to the primary down, replay paused): once it
      // has not replayed a head known LAG_PRIMARY_MS ago the tail pulls from the primary, the change
      // log with it, until the replica moves again, so waiting long-polls are answered at once rather
      // than at their deadline, and reads seldom find the tail behind. One source per pull.
      const source = this.fromPrimary() ? this.opts.primary! : this.reader
      try {
        const before = this.tail.head
        metrics.feedQueries.inc({ kind: source === this.reader ? 'pull' : 'pull_primary' })
        const page = await source.pageAfter(before, REFRESH_ROWS, EVERYTHING, Date.now())
        if (source === this.reader) this.replayed = page.head
        if (page.epoch !== this.epoch) {
          // @NOTE the board failed over: signals this tail took from the lost primary may be gone,
          // and its change numbers may run behind ours. Load the tail afresh: every seq the new
          // primary hands out lies above the jump, past any cursor this process ever answered with.
          this.log.warn({ epoch: page.epoch }, 'the board failed over (seq jumped): reloading the tail')
          await this.load()
          this.#knownHead = this.tail.head
          metrics.tailSize.set(this.tail.entries.length)
          await this.advanced()
          continue
        }
        this.tail.append(page.signals, page.upTo)
        if (page.changes > this.changes) await this.applyChanges(page.changes, source)
        this.#knownHead = Math.max(this.#knownHead, this.tail.head)
        if (page.upTo < page.head) this.refreshAgain = true
        metrics.tailSize.set(this.tail.entries.length)
        // @NOTE awaited: while the waiters are answered the tail stays where their page was made, so
        // followers polling again meanwhile wait for the next wake-up's shared page instead of each
        // getting (and encoding) a page of its own from the tail (bench/results/delivery-tail.md)
        if (this.tail.head > before) await this.advanced()
      } catch (err) {
        // the primary not answering either (a failover under way): the replica again for a while
        if (source !== this.reader) this.behindSince = Date.now()
        this.log.warn({ err, primary: source !== this.reader }, 'feed refresh failed; retrying on the next wake-up or timer')
      }
    } while (this.refreshAgain && !this.closed)
    if (this.lagging) await this.checkKnownHead()
    await this.lookAtReplica()
    // behind by time, not by signals: a replica that replays what was known a moment ago is keeping
    // up (under steady publishing it is always a few signals short), one that does not has stopped
    if (!this.opts.primary || this.replayed >= this.#knownHead) this.behindSince = 0
    else if (!this.behindSince || this.replayed >= this.behindTarget) [this.behindSince, this.behindTarget] = [Date.now(), this.#knownHead]
    metrics.replicaLagSignals.set(Math.max(0, this.#knownHead - Math.max(this.replayed, this.opts.primary ? 0 : this.tail.head)))
    if (!this.lagging) for (const fn of [...this.caughtUpListeners]) fn()
    // @NOTE a replica behind a head the primary confirms: look again shortly until it has replayed
    else if (!this.lagRetry && !this.closed)
      this.lagRetry = setTimeout(() => {
        this.lagRetry = undefined
        void this.refresh()
      }, LAG_RETRY_MS)
  }

  private fromPrimary(): boolean {
    return this.opts.primary !== undefined && this.behindSince > 0 && Date.now() - this.behindSince >= LAG_PRIMARY_MS
  }

  /** While the tail pulls from the primary, how far the replica has replayed, at most every HEAD_CHECK_MS. */
  private async lookAtReplica() {
    if (!this.fromPrimary() || Date.now() - this.lastReplayedLook < HEAD_CHECK_MS) return
    this.lastReplayedLook = Date.now()
    try {
      this.replayed = await this.reader.head()
    } catch {
      /* still behind, as far as anyone knows: the next look tells */
    }
  }

  /**
   * A head we were told about that the database we read has not reached: believe it only as far
   * as the primary does. Reading the primary itself, nothing is missing: the head was stale or forged.
   */
  private async checkKnownHead() {
    if (this.opts.primary && Date.now() - this.lastHeadCheck < HEAD_CHECK_MS) return
    this.lastHeadCheck = Date.now()
    try {
      const truth = this.opts.primary ? await this.opts.primary.head() : this.tail.head
      this.#knownHead = Math.max(this.tail.head, Math.min(this.#knownHead, truth))
    } catch (err) {
      this.log.warn({ err }, 'could not confirm the feed head with the primary')
    }
  }

  /** Pins, unpins and removals the tail has not seen, whether or not their bus message arrived; from the database the page came from. */
  private async applyChanges(upTo: number, source: SignalReader) {
    while (this.changes < upTo) {
      const batch = await source.changesSince(this.changes)
      for (const c of batch) this.tail.update(c.id, c.signal)
      this.changes = batch.length ? batch.at(-1)!.changed : upTo
    }
  }

  /** A removal, pin or unpin: re-read that signal so the tail serves its current state. */
  async invalidate(m: Invalidation) {
    if (m.kind !== 'signal') return
    if (this.refreshing) await this.refreshing
    try {
      const fresh = await this.reader.byId(m.id)
      if (fresh === null || fresh.seq > this.tail.head) this.changedAhead = true
      this.tail.update(m.id, fresh)
    } catch (err) {
      this.log.warn({ err, id: m.id }, 'signal refresh failed')
    }
  }

  stop() {
    this.closed = true
    clearInterval(this.timer)
    clearTimeout(this.lagRetry)
  }
}

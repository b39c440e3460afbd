import type { WakeBus } from '../bus/index.js'
import type { SignalReader } from '../db/index.js'
import type { ReadQuery } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { hotCounts, metrics } from '../metrics/index.js'
import { emptyPage, type FeedPage } from './page.js'
import { databasePage, tailNewest, tailPage } from './tail-pages.js'
import { TailSync } from './tail-sync.js'
import { Waiters, type Gone } from './waiters.js'

const countRead = (fromTail: FeedPage | null) => void (fromTail ? hotCounts.tailReads++ : hotCounts.dbReads++)

export interface FeedOptions {
  authority: string
  tailSize: number
  fallbackPollMs: number
  /** SIGNAL_SWEEP_GRACE_SECONDS in ms: older expired signals count as swept. */
  graceMs: number
  /** Readers on a replica: answers what the replica has not replayed yet after `lagWaitMs`. */
  primary?: SignalReader
  lagWaitMs?: number
  /** READER_MAX_WAITERS: long-polls waiting at once; past it a wait is refused with 503 (0: no cap). */
  maxWaiters?: number
}

/**
 * GET /sw/signals for one process: pages from the in-memory tail when it reaches back to the
 * cursor, else from the database, and long-polls that wait for a match.
 *
 * @NOTE the cursor promise (docs/architecture.md): a page's `nextCursor` never passes a signal
 * this read did not consider. Every answer, whether first page, wake-up, deadline or shutdown, is
 * computed from the tail or the database at that moment, and a long-poll registers in the same turn
 * of the event loop as its last look at the tail, so a signal the tail took in while a database
 * query was running is seen, not stepped over.
 */
export class Feed {
  private readonly sync: TailSync
  private readonly waiters: Waiters
  private readonly reader: SignalReader
  private readonly opts: FeedOptions
  private closed = false

  constructor(reader: SignalReader, bus: WakeBus, log: Logger, opts: FeedOptions) {
    this.reader = reader
    this.opts = opts
    this.waiters = new Waiters(opts.maxWaiters)
    this.sync = new TailSync(reader, bus, log, opts, () => this.waiters.wake((q, cursor) => this.pageAfter(q, cursor)))
  }

  start() {
    return this.sync.start()
  }

  get head() {
    return this.sync.head
  }
  get waiting() {
    return this.waiters.size
  }

  /** One page of GET /sw/signals; with `waitMs`, waits for a match until then or until `gone` aborts (the caller left). */
  async read(q: ReadQuery, gone?: Gone): Promise<FeedPage> {
    // a cursor beyond any head the board has reached (another board, a reset database): back to the
    // head at once. One merely beyond this process's news (another reader served it) is behind-ness.
    if (q.cursor !== null && q.cursor > this.sync.knownHead && !(await this.sync.reached(q.cursor))) return emptyPage(this.sync.head)
    // read-your-writes: a head we were told about is loaded first; a replica still behind it gets a moment to replay
    const replayed = this.sync.lagging ? await this.sync.catchUp(this.opts.lagWaitMs ?? 500) : true
    const found = this.firstPage(q, !replayed)
    const first = found instanceof Promise ? await found : found // the tail's answer takes no extra turn
    if (first.signals.length || first.partial || q.waitMs <= 0 || this.closed) return first
    // the first page may have come from the database while the tail moved on: look at the tail again,
    // now, in the same turn as registering the wait
    const again = tailPage(this.sync.tail, q, first.nextCursor, Date.now(), this.opts.graceMs)
    if (again?.signals.length) return again
    const outcome = await this.waiters.add(q, again?.nextCursor ?? first.nextCursor, q.waitMs, gone)
    return 'page' in outcome ? outcome.page : this.answerAt(q, outcome.cursor)
  }

  /** Ends every long-poll now (shutdown): each answers from what this process has. */
  close() {
    this.closed = true
    this.sync.stop()
    this.waiters.releaseAll()
  }

  private firstPage(q: ReadQuery, replicaBehind: boolean): FeedPage | Promise<FeedPage> {
    const now = Date.now()
    if (q.cursor === null) {
      const fromTail = tailNewest(this.sync.tail, q, now, this.opts.graceMs)
      countRead(fromTail)
      if (fromTail) return fromTail
      metrics.feedQueries.inc({ kind: 'newest' })
      // nextCursor: the head it was read at
      return this.reader.newestJson(q.limit, q, now, this.opts.authority).then(databasePage)
    }
    // never "nothing new" below a head the replica has not replayed: the primary answers that
    if (replicaBehind && this.opts.primary) return (countRead(null), this.databasePage(q, q.cursor, now, this.opts.primary))
    const fromTail = tailPage(this.sync.tail, q, q.cursor, now, this.opts.graceMs)
    countRead(fromTail)
    return fromTail ?? this.databasePage(q, q.cursor, now)
  }

  /** Matches after `cursor` now: the tail when it reaches back that far, else the database. */
  private pageAfter(q: ReadQuery, cursor: number): FeedPage | Promise<FeedPage> {
    const now = Date.now()
    return tailPage(this.sync.tail, q, cursor, now, this.opts.graceMs) ?? this.databasePage(q, cursor, now)
  }

  /** The answer of a wait that ended without a wake-up (deadline, shutdown): what matches now. */
  private async answerAt(q: ReadQuery, cursor: number): Promise<FeedPage> {
    if (this.sync.lagging && this.opts.primary && !this.closed) return this.databasePage(q, cursor, Date.now(), this.opts.primary)
    return tailPage(this.sync.tail, q, cursor, Date.now(), this.opts.graceMs) ?? emptyPage(cursor)
  }

  private async databasePage(q: ReadQuery, cursor: number, now: number, reader = this.reader): Promise<FeedPage> {
    metrics.feedQueries.inc({ kind: reader === this.reader ? 'page' : 'primary' })
    return databasePage(await reader.pageAfterJson(cursor, q.limit, q, now, this.opts.authority))
  }
}

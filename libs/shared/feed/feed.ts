import type { WakeBus } from '../bus/index.js'
import { isConnectionError, type SignalReader } from '../db/index.js'
import { servedBy, unfiltered, type ReadQuery } from '../domain/index.js'
import type { Logger } from '../log/index.js'
import { hotCounts, metrics } from '../metrics/index.js'
import { tracing } from '../tracing/index.js'
import { ChunkCache } from './chunk-cache.js'
import { emptyPage, type FeedPage } from './page.js'
import { PageSources, type PageSource } from './page-sources.js'
import { databasePage, tailNewest } from './tail-pages.js'
import { TailSync, type TailSyncOptions } from './tail-sync.js'
import { ReadGate } from './read-gate.js'
import { SharedPages } from './shared-pages.js'
import { tracedSink } from './traced-sink.js'
import type { Gone } from '../caller.js'
import { Waiters, type PageSink } from './waiters.js'

/** An unfiltered newest page: the tail's newest `limit` entries are it. */
const unfilteredOrDense = (q: ReadQuery) => unfiltered({ ...q, includeExpired: false })

/** A first page answered in this turn came from memory; one that waits, from a database. */
const countRead = (found: FeedPage | Promise<FeedPage>) => void (found instanceof Promise ? hotCounts.dbReads++ : hotCounts.tailReads++)
const tailServes = servedBy('tail')

/** The tail's options (its size, bound and fallback poll; on a replica, the primary), and the reads'. */
export interface FeedOptions extends TailSyncOptions {
  /** SIGNAL_SWEEP_GRACE_SECONDS in ms: older expired signals count as swept. */
  graceMs: number
  /** READER_MAX_WAITERS: long-polls waiting at once; past it a wait is refused with 503 (0: no cap). */
  maxWaiters?: number
  /** READ_DB_CONCURRENCY_MAX: first pages read from the database at once (as many more may wait; 0: no gate). */
  maxDbReads?: number
  /** READER_CHUNK_CACHE_MAX_BYTES: the chunk cache's bound (chunk-cache.ts; 0: none). */
  chunkCacheMaxBytes?: number
}

/**
 * GET /sw/signals for one process: pages from the first of its page sources that answers (the
 * in-memory tail when it reaches back to the cursor, the chunk cache when it holds the way, the
 * database; `sources` below), and long-polls that wait for a match.
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
  private readonly gate: ReadGate
  /** Reads below the tail, unfiltered or by tags, answered from memory once a read asked for their chunk. */
  private readonly chunks: ChunkCache
  /** Pages after a cursor from the tail, one per query and cursor while the tail stays as it is. */
  private readonly shared = new SharedPages()
  /** Where pages come from, in the order they are asked (pageSources). */
  readonly sources: PageSources
  private closed = false

  constructor(reader: SignalReader, bus: WakeBus, log: Logger, opts: FeedOptions) {
    this.reader = reader
    this.opts = opts
    this.waiters = new Waiters((q, cursor, sink) => this.answerAt(q, cursor, sink), opts.maxWaiters)
    this.gate = new ReadGate(opts.maxDbReads ?? 0, opts.maxDbReads ?? 0)
    // a wake-up's page: matches after the waiters' cursor now, from the first source that answers
    this.sync = new TailSync(reader, bus, log, opts, () =>
      this.waiters.wake((q, cursor) => this.sources.page(q, cursor, Date.now(), false)),
    )
    this.chunks = new ChunkCache(
      opts.chunkCacheMaxBytes ?? 0,
      (lo, hi) => reader.chunk(lo, hi, opts.authority),
      this.sync,
      () => void this.sync.refresh(),
    )
    this.sources = this.pageSources()
    // a pin, an unpin or a removal (this process's own admin call awaits this): nothing cached may be served again
    bus.onInvalidation((m) => m.kind === 'signal' && this.chunks.invalidate())
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
  /** Changes whenever what the feed holds does (a signal, a pin, an unpin, a removal): keys answers that may be shared. */
  get version() {
    return `${this.sync.head}:${this.sync.changesSeen}`
  }

  /** One page of GET /sw/signals; with `waitMs`, waits for a match until then or until `gone` aborts (the caller left). */
  read(q: ReadQuery, gone?: Gone): Promise<FeedPage> {
    return new Promise((page, fail) => this.readTo(q, gone, { page, fail }))
  }

  /**
   * `read` for the hot path: the answer goes to `sink`, once. A long-poll that waits is held by the
   * sink and its waiter only (no suspended async function, no promise), and a follower at the head
   * reaches its wait without any.
   */
  readTo(q: ReadQuery, gone: Gone | undefined, sink: PageSink): void {
    if (tracing.on) sink = tracedSink(q, sink) // off: no extra object per read
    // a cursor beyond this process's head, or a replica behind: the first page waits on something first
    if ((q.cursor !== null && q.cursor > this.sync.knownHead) || this.sync.lagging) return void this.readLater(q, gone, sink)
    let found: FeedPage | Promise<FeedPage>
    try {
      found = this.firstPage(q, false)
    } catch (err) {
      return void sink.fail(err)
    }
    if (found instanceof Promise)
      found.then(
        (first) => this.waitAfter(q, first, gone, sink),
        (err: unknown) => sink.fail(err),
      )
    else this.waitAfter(q, found, gone, sink, true) // the tail's answer takes no extra turn
  }

  /** readTo when the first page must wait on something: a cursor beyond this process's news, a replica still replaying. */
  private async readLater(q: ReadQuery, gone: Gone | undefined, sink: PageSink): Promise<void> {
    let first: FeedPage
    try {
      // a cursor beyond any head the board has reached (another board, a reset database): back to the
      // head at once. One merely beyond this process's news (another reader served it) is behind-ness.
      if (q.cursor !== null && q.cursor > this.sync.knownHead && !(await this.sync.reached(q.cursor)))
        return sink.page(emptyPage(this.sync.head))
      // read-your-writes: a head we were told about is loaded first; a replica still behind it gets 500 ms to replay
      const replayed = this.sync.lagging ? await this.sync.catchUp(500) : true
      const found = this.firstPage(q, !replayed)
      first = found instanceof Promise ? await found : found
    } catch (err) {
      return sink.fail(err)
    }
    this.waitAfter(q, first, gone, sink)
  }

  /**
   * The first page answers, or the read waits. The first page may have come from the database
   * while the tail moved on: the tail is looked at again, now, in the same turn as registering the
   * wait (the cursor promise). A first page made in this turn (`now`: from the tail or the chunk
   * cache, with no await since) is that look already.
   */
  private waitAfter(q: ReadQuery, first: FeedPage, gone: Gone | undefined, sink: PageSink, now = false): void {
    if (first.signals.length || first.partial || q.waitMs <= 0 || this.closed) return void sink.page(first)
    if (now) return void this.waiters.add(q, first.nextCursor, q.waitMs, gone, sink)
    const again = this.tailAfter(q, first.nextCursor, Date.now())
    if (again?.signals.length) return void sink.page(again)
    this.waiters.add(q, again?.nextCursor ?? first.nextCursor, q.waitMs, gone, sink)
  }

  /**
   * The first page of `q` comes from memory: the tail reaches back to its cursor (a follower near
   * the head), or holds its whole newest page. Under overload only these are admitted (the fast
   * path refuses the rest before parsing more), so followers keep being served.
   */
  fromTail(q: ReadQuery): boolean {
    const tail = this.sync.tail
    if (this.sync.lagging || !tailServes(q)) return false
    if (q.cursor !== null) return q.cursor <= this.sync.knownHead && tail.covers(q.cursor)
    return tail.from === 0 || (q.q === null && unfilteredOrDense(q) && tail.entries.length >= q.limit)
  }

  /** Ends every long-poll now (shutdown): each answers from what this process has. */
  close() {
    this.closed = true
    this.sync.stop()
    this.waiters.releaseAll()
  }

  /**
   * Where pages come from, in the order they are asked (page-sources.ts): after a cursor, the tail
   * when it reaches back that far (one shared page per query and cursor while the tail stays as it
   * is), else the chunk cache when it holds the way, else the database. The newest page asks the
   * chunk cache before the tail: it matches only the tail's newest few one by one, where the tail
   * alone would match all of it. Which reads each may answer is its column of READ_FILTERS.
   */
  private pageSources(): PageSources {
    const { graceMs, authority } = this.opts
    // off (no bytes), the chunk cache is not asked: it would ask for chunks it may not keep
    const chunks: PageSource[] = this.opts.chunkCacheMaxBytes
      ? [
          {
            name: 'chunks',
            after: (q, cursor, now) => this.chunks.after(q, cursor, this.sync.tail, now, graceMs),
            newest: (q, now) => this.chunks.newest(q, this.sync.tail, now, graceMs),
          },
        ]
      : []
    return new PageSources([
      { name: 'tail', after: (q, cursor, now) => this.tailAfter(q, cursor, now) },
      ...chunks,
      { name: 'tail', newest: (q, now) => tailNewest(this.sync.tail, q, now, graceMs) },
      {
        name: 'database',
        // a first page waits its turn at the gate (READ_DB_CONCURRENCY_MAX); a wait already admitted never does
        after: (q, cursor, now, first) =>
          first ? this.gate.run(() => this.databasePage(q, cursor, now)) : this.databasePage(q, cursor, now),
        newest: (q, now) => {
          metrics.feedQueries.inc({ kind: 'newest' })
          // nextCursor: the head it was read at
          return this.gate.run(() => this.reader.newestJson(q.limit, q, now, authority)).then(databasePage)
        },
      },
    ])
  }

  private firstPage(q: ReadQuery, replicaBehind: boolean): FeedPage | Promise<FeedPage> {
    const now = Date.now()
    // never "nothing new" below a head the replica has not replayed: the primary answers that
    const found =
      q.cursor !== null && replicaBehind && this.opts.primary ? this.onPrimary(q, q.cursor, now) : this.sources.page(q, q.cursor, now, true)
    countRead(found)
    return found
  }

  /** Matches after `cursor` from the tail (null: it does not reach back that far); one shared page per query and cursor while the tail stays as it is. */
  private tailAfter(q: ReadQuery, cursor: number, now: number): FeedPage | null {
    return tailServes(q) ? this.shared.page(this.sync.tail, q, cursor, now, this.opts.graceMs) : null
  }

  /** The answer of a wait that ended without a wake-up (deadline, client gone, shutdown): what matches now. */
  private answerAt(q: ReadQuery, cursor: number, sink: PageSink): void {
    if (this.sync.lagging && this.opts.primary && !this.closed)
      return void this.onPrimary(q, cursor, Date.now()).then(
        (p) => sink.page(p),
        (err: unknown) => sink.fail(err),
      )
    let page: FeedPage
    try {
      page = this.tailAfter(q, cursor, Date.now()) ?? emptyPage(cursor)
    } catch (err) {
      return void sink.fail(err)
    }
    sink.page(page)
  }

  /**
   * What the replica has not replayed, from the primary; while the primary is unreachable (it died,
   * a standby is being promoted) what the replica and the tail hold: a cursor that stops at the
   * replica's head skips nothing, and readers keep answering through a failover.
   */
  private async onPrimary(q: ReadQuery, cursor: number, now: number): Promise<FeedPage> {
    try {
      return await this.databasePage(q, cursor, now, this.opts.primary)
    } catch (err) {
      if (!isConnectionError(err)) throw err
      return this.sources.page(q, cursor, now, false)
    }
  }

  private async databasePage(q: ReadQuery, cursor: number, now: number, reader = this.reader): Promise<FeedPage> {
    metrics.feedQueries.inc({ kind: reader === this.reader ? 'page' : 'primary' })
    return databasePage(await reader.pageAfterJson(cursor, q.limit, q, now, this.opts.authority))
  }
}
